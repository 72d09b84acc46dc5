//! Extraction of SCoPs from small C snippets: domains, schedules, accesses, parameters, arrays
//! and body pieces, each checked against an expectation derived by hand from the C semantics.

mod common;

use common::{in_function, parse, parse_with, scops};
use frontend::ir::{ArrayId, BodyPiece, Span};
use frontend::ScopMode;
use pretty_assertions::assert_eq;

/// The region `#pragma scop` line start .. end of the `#pragma endscop` line, found by plain
/// string search (an oracle independent of the tokenizer).
fn region_of(src: &str) -> String {
    let start = src.find("#pragma scop").expect("scop pragma");
    let end_pragma = src.find("#pragma endscop").expect("endscop pragma");
    let end = end_pragma
        + src[end_pragma..]
            .find('\n')
            .map_or(src.len() - end_pragma, |k| k + 1);
    format!("{start}..{end}")
}

fn check(src: &str, expected: &str) {
    let expected = expected.replace("REGION", &region_of(src));
    assert_eq!(scops(src), expected);
}

#[test]
fn triangular_nest_with_a_parameter() {
    let src = in_function(
        "",
        "  for (i = 0; i < n; i++)\n    for (j = 0; j <= i; j++)\n      A[i][j] = A[j][i] + 1.0;\n",
    );
    check(
        &src,
        "scop in f at 5:1 region REGION insert_at 0
param n: int local
context [n] -> { : }
array A0 A: double rank 2 local written
S0 at 8:7: @{A}[${i}][${j}] = @{A}[${j}][${i}] + 1.0;
  domain [n] -> { S0[i, j] : i >= 0 and i <= n - 1 and j >= 0 and j <= i }
  schedule [n] -> { S0[i, j] -> [0, i, 0, j, 0] }
  write [n] -> { S0[i, j] -> A[i, j] }
  read [n] -> { S0[i, j] -> A[j, i] }
",
    );
}

#[test]
fn decreasing_loop_with_a_stride_is_scheduled_backwards() {
    let src = in_function("", "  for (i = n; i > 0; i -= 2)\n    B[i] = x;\n");
    check(
        &src,
        "scop in f at 5:1 region REGION insert_at 0
param n: int local
context [n] -> { : }
array A0 B: double rank 1 local written
array A1 x: double rank 0 local
S0 at 7:5: @{B}[${i}] = @{x};
  domain [n] -> { S0[i] : i <= n and (i - n) mod 2 = 0 and i >= 1 }
  schedule [n] -> { S0[i] -> [0, -i, 0] }
  write [n] -> { S0[i] -> B[i] }
  read [n] -> { S0[i] -> x[] }
",
    );
}

#[test]
fn strided_loop_from_a_parameter_and_a_declared_counter() {
    let src = in_function(
        "",
        "  for (i = m; i < n; i = i + 3)\n    for (int k2 = 0; k2 < 4; ++k2)\n      A[i][k2] = 0;\n",
    );
    check(
        &src,
        "scop in f at 5:1 region REGION insert_at 0
param m: int local
param n: int local
context [m, n] -> { : }
array A0 A: double rank 2 local written
S0 at 8:7: @{A}[${i}][${k2}] = 0;
  domain [m, n] -> { S0[i, k2] : i >= m and (i - m) mod 3 = 0 and i <= n - 1 and k2 >= 0 and k2 <= 3 }
  schedule [m, n] -> { S0[i, k2] -> [0, i, 0, k2, 0] }
  write [m, n] -> { S0[i, k2] -> A[i, k2] }
",
    );
}

#[test]
fn if_else_conditions_with_and_or_not() {
    let src = in_function(
        "",
        "  for (i = 0; i < n; i++) {\n    if (i > 2 && !(i == 5) || i == n - 1)\n      B[i] = 0;\n    else\n      B[i] = 1;\n  }\n",
    );
    // The else branch is the negation: (i <= 2 or i = 5) and i != n - 1.
    check(
        &src,
        "scop in f at 5:1 region REGION insert_at 0
param n: int local
context [n] -> { : }
array A0 B: double rank 1 local written
S0 at 8:7: @{B}[${i}] = 0;
  domain [n] -> { S0[i] : i >= 0 and i <= n - 1 and ((i >= 3 and (i >= 6 or i <= 4)) or i = n - 1) }
  schedule [n] -> { S0[i] -> [0, i, 0] }
  write [n] -> { S0[i] -> B[i] }
S1 at 10:7: @{B}[${i}] = 1;
  domain [n] -> { S1[i] : i >= 0 and i <= n - 1 and (i <= 2 or (i <= 5 and i >= 5)) and (i >= n or i <= n - 2) }
  schedule [n] -> { S1[i] -> [0, i, 1] }
  write [n] -> { S1[i] -> B[i] }
",
    );
}

#[test]
fn top_level_if_on_a_parameter_and_a_written_scalar() {
    let src = in_function("", "  if (n > 10)\n    x = 1;\n");
    check(
        &src,
        "scop in f at 5:1 region REGION insert_at 0
param n: int local
context [n] -> { : }
array A0 x: double rank 0 local written
S0 at 7:5: @{x} = 1;
  domain [n] -> { S0[] : n >= 11 }
  schedule [n] -> { S0[] -> [0] }
  write [n] -> { S0[] -> x[] }
",
    );
}

#[test]
fn division_and_modulo_follow_c_truncation() {
    // In the first loop i >= 0, so i / 2 is floor(i/2). In the second, i + 1 may be negative:
    // C's (i + 1) / 2 is then -floor((-i - 1)/2), e.g. (-3) / 2 = -1, not floor(-3/2) = -2.
    let src = in_function(
        "",
        "  for (i = 0; i < n; i++)\n    B[i / 2] = A[i % 3][(i + 1) / 2];\n  for (i = -n; i < n; i++)\n    B[(i + 1) / 2] = 0;\n",
    );
    check(
        &src,
        "scop in f at 5:1 region REGION insert_at 0
param n: int local
context [n] -> { : }
array A0 B: double rank 1 local written
array A1 A: double rank 2 local
S0 at 7:5: @{B}[${i} / 2] = @{A}[${i} % 3][(${i} + 1) / 2];
  domain [n] -> { S0[i] : i >= 0 and i <= n - 1 }
  schedule [n] -> { S0[i] -> [0, i, 0] }
  write [n] -> { S0[i] -> B[floor(i/2)] }
  read [n] -> { S0[i] -> A[(i mod 3), floor((i + 1)/2)] }
S1 at 9:5: @{B}[(${i} + 1) / 2] = 0;
  domain [n] -> { S1[i] : i >= -n and i <= n - 1 }
  schedule [n] -> { S1[i] -> [1, i, 0] }
  write [n] -> { S1[i] -> B[tf_o0] : (i >= -1 and tf_o0 = floor((i + 1)/2)) or (i <= -2 and tf_o0 = -floor((-i - 1)/2)) }
",
    );
}

#[test]
fn negative_modulo_keeps_the_sign_of_the_dividend() {
    // i - 5 < 0 for i < 5, where C's (i - 5) % 4 is -((5 - i) mod 4).
    let src = in_function(
        "",
        "  for (i = 0; i < n; i++)\n    B[(i - 5) % 4 + 3] = 0;\n",
    );
    check(
        &src,
        "scop in f at 5:1 region REGION insert_at 0
param n: int local
context [n] -> { : }
array A0 B: double rank 1 local written
S0 at 7:5: @{B}[(${i} - 5) % 4 + 3] = 0;
  domain [n] -> { S0[i] : i >= 0 and i <= n - 1 }
  schedule [n] -> { S0[i] -> [0, i, 0] }
  write [n] -> { S0[i] -> B[tf_o0] : (i >= 5 and tf_o0 = ((i - 5) mod 4) + 3) or (i <= 4 and tf_o0 = -((-i + 5) mod 4) + 3) }
",
    );
}

#[test]
fn division_in_a_loop_bound() {
    let src = in_function(
        "",
        "  for (i = 0; i < n; i++)\n    for (j = 0; j <= i / 2; j++)\n      A[i][j] = 0;\n",
    );
    check(
        &src,
        "scop in f at 5:1 region REGION insert_at 0
param n: int local
context [n] -> { : }
array A0 A: double rank 2 local written
S0 at 8:7: @{A}[${i}][${j}] = 0;
  domain [n] -> { S0[i, j] : i >= 0 and i <= n - 1 and j >= 0 and j <= floor(i/2) }
  schedule [n] -> { S0[i, j] -> [0, i, 0, j, 0] }
  write [n] -> { S0[i, j] -> A[i, j] }
",
    );
}

#[test]
fn min_macro_in_a_bound_becomes_a_disjunction() {
    let src = "#define min(a, b) ((a) < (b) ? (a) : (b))
void f(int n, double A[100][100])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < min(i + 4, n); j++)
      A[i][j] = 0;
#pragma endscop
}
";
    let insert_at = src.find("void f").expect("function");
    check(
        src,
        &format!(
            "scop in f at 5:1 region REGION insert_at {insert_at}
param n: int local
context [n] -> {{ : }}
array A0 A: double rank 2 local written
S0 at 8:7: @{{A}}[${{i}}][${{j}}] = 0;
  domain [n] -> {{ S0[i, j] : i >= 0 and i <= n - 1 and j >= 0 and ((i <= n - 5 and j <= i + 3) or (i >= n - 4 and j <= n - 1)) }}
  schedule [n] -> {{ S0[i, j] -> [0, i, 0, j, 0] }}
  write [n] -> {{ S0[i, j] -> A[i, j] }}
"
        ),
    );
}

#[test]
fn scalars_read_only_written_and_parameters() {
    // n bounds the loop: a parameter, printed as plain text in the body. k and s are only read
    // by statements: rank-0 arrays. acc is written: a rank-0 array, never a parameter.
    let src = "void f(int n, int k, double s, double A[100])
{
  int i;
  double acc;
#pragma scop
  acc = 0.0;
  for (i = 0; i < n; i++)
    acc += A[i] * s + n + k;
  A[0] = acc;
#pragma endscop
}
";
    check(
        src,
        "scop in f at 5:1 region REGION insert_at 0
param n: int local
context [n] -> { : }
array A0 acc: double rank 0 local written
array A1 A: double rank 1 local written
array A2 s: double rank 0 local
array A3 k: int rank 0 local
S0 at 6:3: @{acc} = 0.0;
  domain [n] -> { S0[] }
  schedule [n] -> { S0[] -> [0, 0, 0] }
  write [n] -> { S0[] -> acc[] }
S1 at 8:5: @{acc} += @{A}[${i}] * @{s} + n + @{k};
  domain [n] -> { S1[i] : i >= 0 and i <= n - 1 }
  schedule [n] -> { S1[i] -> [1, i, 0] }
  read [n] -> { S1[i] -> acc[] }
  write [n] -> { S1[i] -> acc[] }
  read [n] -> { S1[i] -> A[i] }
  read [n] -> { S1[i] -> s[] }
  read [n] -> { S1[i] -> k[] }
S2 at 9:3: @{A}[0] = @{acc};
  domain [n] -> { S2[] }
  schedule [n] -> { S2[] -> [2, 0, 0] }
  write [n] -> { S2[] -> A[0] }
  read [n] -> { S2[] -> acc[] }
",
    );
}

#[test]
fn globals_have_file_storage_and_clashing_names_are_renamed() {
    let src = "double S1[10];
double and[10];
int len;
void g(void)
{
  int i;
#pragma scop
  for (i = 0; i < len; i++)
    S1[i] = and[i];
#pragma endscop
}
";
    let insert_at = src.find("void g").expect("function");
    check(
        src,
        &format!(
            "scop in g at 7:1 region REGION insert_at {insert_at}
param len: int file
context [len] -> {{ : }}
array A0 S1 (isl S1_): double rank 1 file written
array A1 and (isl and_): double rank 1 file
S0 at 9:5: @{{S1}}[${{i}}] = @{{and}}[${{i}}];
  domain [len] -> {{ S0[i] : i >= 0 and i <= len - 1 }}
  schedule [len] -> {{ S0[i] -> [0, i, 0] }}
  write [len] -> {{ S0[i] -> S1_[i] }}
  read [len] -> {{ S0[i] -> and_[i] }}
"
        ),
    );
}

#[test]
fn pointer_to_array_vla_and_local_arrays() {
    let src = "void h(int n, int m, double (*P)[m], float L2[n][m])
{
  int i, j;
  int loc[8][8];
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) {
      P[i][j] = L2[i][j];
      loc[i % 8][j % 8] += 1;
    }
#pragma endscop
}
";
    check(
        src,
        "scop in h at 5:1 region REGION insert_at 0
param n: int local
param m: int local
context [n, m] -> { : }
array A0 P: double rank 2 local written
array A1 L2: float rank 2 local
array A2 loc: int rank 2 local written
S0 at 8:7: @{P}[${i}][${j}] = @{L2}[${i}][${j}];
  domain [n, m] -> { S0[i, j] : i >= 0 and i <= n - 1 and j >= 0 and j <= m - 1 }
  schedule [n, m] -> { S0[i, j] -> [0, i, 0, j, 0] }
  write [n, m] -> { S0[i, j] -> P[i, j] }
  read [n, m] -> { S0[i, j] -> L2[i, j] }
S1 at 9:7: @{loc}[${i} % 8][${j} % 8] += 1;
  domain [n, m] -> { S1[i, j] : i >= 0 and i <= n - 1 and j >= 0 and j <= m - 1 }
  schedule [n, m] -> { S1[i, j] -> [0, i, 0, j, 1] }
  read [n, m] -> { S1[i, j] -> loc[(i mod 8), (j mod 8)] }
  write [n, m] -> { S1[i, j] -> loc[(i mod 8), (j mod 8)] }
",
    );
}

#[test]
fn enum_constants_casts_and_increments_of_elements() {
    let src = "enum { SIZE = 16 };
void f(long n, int C[SIZE])
{
  long i;
#pragma scop
  for (i = (long)SIZE - 1; i >= 0; --i)
    C[(int)i]++;
#pragma endscop
}
";
    let insert_at = src.find("void f").expect("function");
    check(
        src,
        &format!(
            "scop in f at 5:1 region REGION insert_at {insert_at}
context {{ : }}
array A0 C: int rank 1 local written
S0 at 7:5: @{{C}}[(int)${{i}}]++;
  domain {{ S0[i] : i <= 15 and i >= 0 }}
  schedule {{ S0[i] -> [0, -i, 0] }}
  read {{ S0[i] -> C[i] }}
  write {{ S0[i] -> C[i] }}
"
        ),
    );
}

#[test]
fn body_pieces_split_at_iterators_and_variables_only() {
    let src = "#define SQR(v) ((v) * (v))
void f(int n, double A[100][100], double B[100], double x)
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = SQR(B[j]) /* note */
                + x;
#pragma endscop
}
";
    let (file, diags) = parse(src);
    assert!(diags.is_empty());
    let s = &file.scops[0].statements[0];
    let text = "A[i][j] = SQR(B[j]) /* note */\n                + x;";
    let start = src.find(text).expect("statement text");
    assert_eq!(
        s.span,
        Span {
            start,
            end: start + text.len()
        }
    );
    use BodyPiece::{Iter, Text, Var};
    assert_eq!(
        s.body,
        vec![
            Var(ArrayId(0)),
            Text("[".into()),
            Iter(0),
            Text("][".into()),
            Iter(1),
            Text("] = SQR(".into()),
            Var(ArrayId(1)),
            Text("[".into()),
            Iter(1),
            Text("]) /* note */\n                + ".into()),
            Var(ArrayId(2)),
            Text(";".into()),
        ]
    );
    let names: Vec<&str> = file.scops[0]
        .arrays
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, vec!["A", "B", "x"]);
}

#[test]
fn scop_header_fields_match_the_source_offsets() {
    let src = "int g;
static
double kernel(int n, double B[100])
{
  int i;
  #  pragma   scop   // the region starts on this line
  for (i = 0; i < n; i++)
    B[i] = 0;
#pragma endscop
  return B[0];
}
";
    let (file, diags) = parse(src);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(file.scops.len(), 1);
    let scop = &file.scops[0];
    assert_eq!(scop.function, "kernel");
    // `static` starts the definition on line 2.
    assert_eq!(scop.insert_at, src.find("static").expect("static"));
    let start = src.find("  #  pragma").expect("pragma line");
    let end = src.find("#pragma endscop").expect("endscop") + "#pragma endscop\n".len();
    assert_eq!(scop.region, Span { start, end });
    assert_eq!((scop.loc.line, scop.loc.col), (6, 3));
    assert_eq!(file.text, src);
}

#[test]
fn several_scops_in_one_file_each_number_their_statements() {
    let src = "void f(int n, double B[100])
{
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    B[i] = 0;
#pragma endscop
  B[0] = 1;
#pragma scop
  B[1] = 2;
#pragma endscop
}
void g(double C[10])
{
#pragma scop
  C[3] = C[2];
#pragma endscop
}
";
    let (file, diags) = parse(src);
    assert!(diags.is_empty());
    let summary: Vec<(String, u32, Vec<String>)> = file
        .scops
        .iter()
        .map(|s| {
            (
                s.function.clone(),
                s.loc.line,
                s.statements.iter().map(|t| t.domain.clone()).collect(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "f".to_string(),
                4,
                vec!["[n] -> { S0[i] : i >= 0 and i <= n - 1 }".to_string()]
            ),
            ("f".to_string(), 9, vec!["{ S0[] }".to_string()]),
            ("g".to_string(), 15, vec!["{ S0[] }".to_string()]),
        ]
    );
    // Regions do not overlap and are in source order.
    assert!(file.scops[0].region.end <= file.scops[1].region.start);
    assert!(file.scops[1].region.end <= file.scops[2].region.start);
}

#[test]
fn pure_math_calls_and_ternaries_in_statements() {
    let src = in_function(
        "",
        "  for (i = 0; i < n; i++)\n    B[i] = B[i] > x ? sqrt(fabs(B[i])) : pow(x, 2.0);\n",
    );
    let src = format!("#include <math.h>\n{src}");
    check(
        &src,
        &format!(
            "scop in f at 6:1 region REGION insert_at {}
param n: int local
context [n] -> {{ : }}
array A0 B: double rank 1 local written
array A1 x: double rank 0 local
S0 at 8:5: @{{B}}[${{i}}] = @{{B}}[${{i}}] > @{{x}} ? sqrt(fabs(@{{B}}[${{i}}])) : pow(@{{x}}, 2.0);
  domain [n] -> {{ S0[i] : i >= 0 and i <= n - 1 }}
  schedule [n] -> {{ S0[i] -> [0, i, 0] }}
  write [n] -> {{ S0[i] -> B[i] }}
  read [n] -> {{ S0[i] -> B[i] }}
  read [n] -> {{ S0[i] -> x[] }}
",
            "#include <math.h>\n".len()
        ),
    );
}

#[test]
fn no_pragma_means_no_scop_under_scop_pragma() {
    let (file, diags) = parse_with(
        "int main(void) { int i, s = 0; for (i = 0; i < 10; i++) s += i; return s; }\n",
        ScopMode::Pragma,
    );
    assert!(file.scops.is_empty());
    assert!(diags.is_empty());
}

#[test]
fn pragmas_in_comments_strings_and_skipped_code_are_ignored() {
    let src = "void f(double B[10])
{
  /* #pragma scop */
  const char *s = \"#pragma scop\";
#if 0
#pragma scop
  B[0] = 1;
#pragma endscop
#endif
  B[1] = 2;
  (void)s;
}
";
    let (file, diags) = parse_with(src, ScopMode::Pragma);
    assert!(file.scops.is_empty());
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn constant_casts_and_sizeof_in_bounds() {
    let src = "void f(void)
{
  int i;
  double L[12];
#pragma scop
  for (i = 0; i < (int)(sizeof(L) / sizeof(L[0])); i++)
    L[i] = sizeof(double);
#pragma endscop
}
";
    check(
        src,
        "scop in f at 5:1 region REGION insert_at 0
context { : }
array A0 L: double rank 1 local written
S0 at 7:5: @{L}[${i}] = sizeof(double);
  domain { S0[i] : i >= 0 and i <= 11 }
  schedule { S0[i] -> [0, i, 0] }
  write { S0[i] -> L[i] }
",
    );
}

#[test]
fn constant_array_extents_are_recorded_and_variable_ones_are_not() {
    // Expected by reading the declarations: an array parameter is a pointer to its first
    // dimension (no extent), macros expand before the extent is read, a variable-length
    // dimension has none, and a local array keeps every extent.
    let src = "#define N 30
void f(int n, double A[N][N + 2][4], double (*P)[7], double V[n][n], double *p)
{
  int i;
  double L[5][6];
#pragma scop
  for (i = 0; i < 4; i++)
    A[i][i][i] = P[i][i] + V[i][i] + L[i][i] + p[i];
#pragma endscop
}
";
    let (file, diags) = parse(src);
    assert!(diags.is_empty(), "{diags:?}");
    let extents: Vec<(String, Vec<Option<u64>>)> = file.scops[0]
        .arrays
        .iter()
        .map(|a| (a.name.clone(), a.extents.clone()))
        .collect();
    assert_eq!(
        extents,
        vec![
            ("A".to_string(), vec![None, Some(32), Some(4)]),
            ("P".to_string(), vec![None, Some(7)]),
            ("V".to_string(), vec![None, None]),
            ("L".to_string(), vec![Some(5), Some(6)]),
            ("p".to_string(), vec![None]),
        ]
    );
}
