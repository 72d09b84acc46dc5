//! Every reason a region is not a static control part: each test checks the whole diagnostic
//! (`file:line:col: warning: not a static control part: <what> (<why>)`) and that no SCoP was
//! produced. Regions built by `in_function` start with `#pragma scop` on line 5; their body
//! starts on line 6.

mod common;

use common::{in_function, parse, refusals};
use pretty_assertions::assert_eq;

fn refused(decls: &str, body: &str) -> Vec<String> {
    refusals(&in_function(decls, body))
}

fn warning(line: u32, col: u32, what: &str, why: &str) -> Vec<String> {
    vec![format!(
        "test.c:{line}:{col}: warning: not a static control part: {what} ({why})"
    )]
}

#[test]
fn non_affine_subscript() {
    assert_eq!(
        refused("", "  for (i = 0; i < n; i++)\n    A[i * j][0] = 0;\n"),
        warning(
            7,
            7,
            "`i * j`",
            "subscript is not affine: product of two non-constant expressions is not affine"
        )
    );
}

#[test]
fn subscript_read_from_an_array() {
    assert_eq!(
        refused("int idx[10];", "  for (i = 0; i < n; i++)\n    B[idx[i]] = 0;\n"),
        warning(
            7,
            7,
            "`idx[i]`",
            "subscript is not affine: array elements are data-dependent values, not affine expressions"
        )
    );
}

#[test]
fn data_dependent_condition() {
    assert_eq!(
        refused(
            "",
            "  for (i = 0; i < n; i++)\n    if (B[i] > 0)\n      B[i] = 0;\n"
        ),
        warning(
            7,
            9,
            "`B[i]`",
            "array elements are data-dependent values, not affine expressions"
        )
    );
}

#[test]
fn data_dependent_loop_bound() {
    assert_eq!(
        refused("", "  for (i = 0; i < x; i++)\n    B[i] = 0;\n"),
        warning(
            6,
            19,
            "`x`",
            "floating-point value where an affine integer expression is required"
        )
    );
}

#[test]
fn non_affine_loop_bound() {
    assert_eq!(
        refused("", "  for (i = 0; i < n * m; i++)\n    B[i] = 0;\n"),
        warning(
            6,
            19,
            "`n * m`",
            "product of two non-constant expressions is not affine"
        )
    );
    assert_eq!(
        refused(
            "",
            "  for (i = 0; i < n; i++)\n    for (j = 0; j < i * i; j++)\n      A[i][j] = 0;\n"
        ),
        warning(
            7,
            21,
            "`i * i`",
            "product of two non-constant expressions is not affine"
        )
    );
}

#[test]
fn call_with_side_effects() {
    assert_eq!(
        refused(
            "double foo(int);",
            "  for (i = 0; i < n; i++)\n    B[i] = foo(i);\n"
        ),
        warning(
            7,
            12,
            "call to `foo`",
            "only pure math functions may be called inside a SCoP"
        )
    );
}

#[test]
fn break_and_continue_and_return() {
    assert_eq!(
        refused(
            "",
            "  for (i = 0; i < n; i++) {\n    if (i > 5) break;\n    B[i] = 0;\n  }\n"
        ),
        warning(
            7,
            16,
            "`break`",
            "jumps out of the control flow are not supported"
        )
    );
    assert_eq!(
        refused("", "  for (i = 0; i < n; i++) {\n    continue;\n  }\n"),
        warning(
            7,
            5,
            "`continue`",
            "jumps out of the control flow are not supported"
        )
    );
    assert_eq!(
        refused("", "  B[0] = 1;\n  return;\n"),
        warning(
            7,
            3,
            "`return`",
            "jumps out of the control flow are not supported"
        )
    );
}

#[test]
fn goto_and_labels() {
    assert_eq!(
        refused("", "  goto out;\nout:\n  B[0] = 1;\n"),
        warning(
            6,
            3,
            "`goto out`",
            "jumps out of the control flow are not supported"
        )
    );
}

#[test]
fn declaration_at_the_top_of_the_region() {
    // Its variable would be visible after the region, which the generated code replaces.
    assert_eq!(
        refused("", "  double t = 0;\n  B[0] = t;\n"),
        warning(
            6,
            3,
            "`double t = 0;`",
            "declarations outside the region's loops and branches are not supported (the variable is visible after the region)"
        )
    );
}

#[test]
fn declarations_inside_the_loops_that_are_not_plain_scalars() {
    let body =
        |decl: &str| format!("  for (i = 0; i < n; i++) {{\n    {decl}\n    B[i] = 1;\n  }}\n");
    assert_eq!(
        refused("", &body("double row[4];")),
        warning(
            7,
            5,
            "`double row[4]`",
            "only scalar variables may be declared inside the region"
        )
    );
    assert_eq!(
        refused("", &body("static double s = 0;")),
        warning(
            7,
            5,
            "`static double s = 0`",
            "`static` variables declared inside the region are not supported"
        )
    );
    assert_eq!(
        refused("", &body("volatile double s = 0;")),
        warning(
            7,
            5,
            "`volatile double s = 0`",
            "`volatile` variables declared inside the region are not supported"
        )
    );
    // Written in the region, so not a parameter: it cannot bound a loop.
    assert_eq!(
        refused(
            "",
            "  for (i = 0; i < n; i++) {\n    int m2 = i + 1;\n    for (j = 0; j < m2; j++)\n      A[i][j] = 0;\n  }\n"
        ),
        warning(
            8,
            21,
            "`m2`",
            "assigned inside the region, so it cannot be a parameter"
        )
    );
}

#[test]
fn while_loop() {
    assert_eq!(
        refused("", "  while (n > 0)\n    n--;\n"),
        warning(
            6,
            3,
            "`while (n > 0) n--`",
            "only `for` loops with affine bounds are supported"
        )
    );
}

#[test]
fn pointer_arithmetic() {
    assert_eq!(
        refused("", "  *(B + 1) = 0;\n"),
        warning(6, 3, "`*(B + 1)`", "pointer operations are not supported")
    );
    assert_eq!(
        refused("", "  B[0] = *B;\n"),
        warning(6, 10, "`*B`", "pointer operations are not supported")
    );
}

#[test]
fn statement_hidden_in_a_macro() {
    assert_eq!(
        refused(
            "\n#define S B[i] = 0",
            "  for (i = 0; i < n; i++)\n    S;\n"
        ),
        warning(
            8,
            5,
            "`S;`",
            "the statement comes from a macro expansion that hides its use of `B`"
        )
    );
}

#[test]
fn macro_call_whose_definition_holds_the_semicolon_written_without_one() {
    // `BUMP(B, i)` expands to a whole statement, `;` included; written without a `;` of its
    // own, its text cannot be re-emitted as a statement.
    assert_eq!(
        refused(
            "\n#define BUMP(a, k) a[k] = a[k] + 1.0;",
            "  for (i = 0; i < n; i++) {\n    BUMP(B, i)\n  }\n"
        ),
        warning(
            8,
            10,
            "`B, i)`",
            "the call of macro `BUMP` is not followed by its own `;` (the `;` comes from the macro's definition): write `BUMP(...);`"
        )
    );
}

#[test]
fn chained_assignment_made_by_a_macro_call() {
    // The two assignments cannot be cut out of the written text `SET2(B[i], A[i][0], x);`.
    assert_eq!(
        refused(
            "\n#define SET2(p, q, v) p = q = (v)",
            "  for (i = 0; i < n; i++)\n    SET2(B[i], A[i][0], x);\n"
        ),
        warning(
            8,
            5,
            "`SET2(...)`",
            "the comma expression or chained assignment that macro `SET2` expands to cannot be split into its statements from the written text"
        )
    );
}

#[test]
fn iterator_hidden_in_a_macro() {
    // `AT(k)` reads B[i] although `i` is not written in the statement: the text cannot be
    // re-emitted with `i` substituted.
    assert_eq!(
        refused(
            "\n#define AT(k) B[i + k]",
            "  for (i = 0; i < n; i++)\n    B[i] = AT(1);\n"
        ),
        warning(
            8,
            5,
            "`B[i] = AT(1);`",
            "the statement comes from a macro expansion that hides its use of `B`"
        )
    );
}

#[test]
fn token_pasting_an_iterator_name() {
    // PASTE(x, i) is the variable `xi`: the token `i` in the text is not the iterator.
    assert_eq!(
        refused(
            "double xi;\n#define PASTE(a, b) a##b",
            "  for (i = 0; i < n; i++)\n    B[i] = PASTE(x, i);\n"
        ),
        warning(
            8,
            5,
            "`B[i] = PASTE(x, i);`",
            "the statement comes from a macro expansion that hides its use of `xi`"
        )
    );
}

#[test]
fn reserved_identifier_prefix() {
    assert_eq!(
        refused(
            "double tf_x;",
            "  for (i = 0; i < n; i++)\n    B[i] = tf_x;\n"
        ),
        warning(
            7,
            12,
            "identifier `tf_x`",
            "the prefix `tf_` is reserved for generated code"
        )
    );
}

#[test]
fn parameter_named_like_an_isl_keyword() {
    assert_eq!(
        refused(
            "int max = 3;",
            "  for (i = 0; i < max; i++)\n    B[i] = 0;\n"
        ),
        warning(
            6,
            19,
            "`max`",
            "its name is an ISL keyword, so it cannot be a parameter"
        )
    );
}

#[test]
fn loop_counter_named_like_an_isl_keyword() {
    assert_eq!(
        refused(
            "int mod;",
            "  for (mod = 0; mod < n; mod++)\n    B[mod] = 0;\n"
        ),
        warning(6, 8, "loop counter `mod`", "its name is an ISL keyword")
    );
}

#[test]
fn unsigned_bound() {
    assert_eq!(
        refused(
            "unsigned u = 4;",
            "  for (i = 0; i < u; i++)\n    B[i] = 0;\n"
        ),
        warning(
            6,
            19,
            "`u`",
            "unsigned arithmetic wraps around, so it is not affine over the integers"
        )
    );
}

#[test]
fn non_constant_step() {
    assert_eq!(
        refused("", "  for (i = 1; i < n; i *= 2)\n    B[i] = 0;\n"),
        warning(
            6,
            22,
            "`i *= 2`",
            "the increment must add a constant to the loop counter"
        )
    );
}

#[test]
fn condition_that_is_not_a_bound() {
    assert_eq!(
        refused("", "  for (i = 0; i != n; i++)\n    B[i] = 0;\n"),
        warning(
            6,
            15,
            "`i != n`",
            "the condition is not a bound on the loop counter in the direction it moves"
        )
    );
    // Counting down while the condition bounds from above would never end.
    assert_eq!(
        refused("", "  for (i = 0; i < n; i--)\n    B[i] = 0;\n"),
        warning(
            6,
            15,
            "`i < n`",
            "the condition is not a bound on the loop counter in the direction it moves"
        )
    );
    assert_eq!(
        refused("", "  for (i = 0; n > 0; i++)\n    B[i] = 0;\n"),
        warning(
            6,
            15,
            "`n > 0`",
            "the condition does not bound the loop counter `i`"
        )
    );
}

#[test]
fn loop_counter_used_after_its_loop() {
    assert_eq!(
        refused(
            "",
            "  for (i = 0; i < n; i++)\n    B[i] = 0;\n  B[i] = 1;\n"
        ),
        warning(
            8,
            5,
            "`i`",
            "subscript is not affine: loop counter used outside its loop"
        )
    );
}

#[test]
fn scalar_written_in_the_region_used_as_a_bound() {
    assert_eq!(
        refused(
            "int m2;",
            "  m2 = 5;\n  for (i = 0; i < m2; i++)\n    B[i] = 0;\n"
        ),
        warning(
            7,
            19,
            "`m2`",
            "assigned inside the region, so it cannot be a parameter"
        )
    );
}

#[test]
fn assignment_to_a_loop_counter() {
    assert_eq!(
        refused("", "  for (i = 0; i < n; i++)\n    i = i + 1;\n"),
        warning(7, 5, "`i`", "assignment to a loop counter")
    );
}

#[test]
fn nested_side_effect() {
    assert_eq!(
        refused("", "  B[0] = B[1]++;\n"),
        warning(
            6,
            10,
            "`B[1]++`",
            "side effects nested inside an expression are not supported"
        )
    );
}

#[test]
fn struct_member() {
    assert_eq!(
        refused("struct { double v; } st;", "  st.v = 1;\n"),
        warning(6, 3, "`st.v`", "struct and union members are not supported")
    );
}

#[test]
fn floating_point_loop_counter() {
    assert_eq!(
        refused("double d;", "  for (d = 0; d < n; d++)\n    B[0] = d;\n"),
        warning(
            6,
            8,
            "`d = 0`",
            "the loop counter must have a signed integer type"
        )
    );
}

#[test]
fn statement_without_assignment() {
    assert_eq!(
        refused("", "  B[0] + 1;\n"),
        warning(
            6,
            3,
            "`B[0] + 1`",
            "only assignments, compound assignments and increments are supported as statements"
        )
    );
}

#[test]
fn preprocessor_directive_inside_the_region() {
    assert_eq!(
        refused("", "#if 1\n  B[0] = 1;\n#endif\n"),
        warning(
            6,
            1,
            "`#if` directive",
            "preprocessor directives inside the region would be lost when it is replaced"
        )
    );
    assert_eq!(
        refused("", "  B[1] = 1;\n#if 0\n  B[0] = 1;\n#endif\n"),
        warning(
            7,
            1,
            "`#if 0 B[0] = 1; #endif`",
            "code excluded by the preprocessor inside the region would be lost when it is replaced"
        )
    );
}

#[test]
fn pragmas_cutting_through_a_statement() {
    let src = "void f(int n, double B[100])
{
  int i;
  for (i = 0; i < n; i++) {
#pragma scop
    B[i] = 0;
  }
#pragma endscop
}
";
    assert_eq!(
        refusals(src),
        warning(
            4,
            3,
            "`for (i = 0; i < n; i++) {`",
            "the pragmas cut through this statement"
        )
    );
}

#[test]
fn unmatched_pragmas() {
    let src = "void f(double B[10])
{
#pragma endscop
  B[0] = 1;
#pragma scop
  B[1] = 1;
}
";
    assert_eq!(
        refusals(src),
        vec![
            "test.c:3:1: warning: not a static control part: `#pragma endscop` (no `#pragma scop` before it)",
            "test.c:5:1: warning: not a static control part: `#pragma scop` (no `#pragma endscop` after it)",
        ]
    );
}

#[test]
fn pragma_outside_a_function() {
    let src = "#pragma scop\nint g;\n#pragma endscop\n";
    assert_eq!(
        refusals(src),
        warning(
            1,
            1,
            "`#pragma scop`",
            "the region is not inside a function body"
        )
    );
}

#[test]
fn empty_region() {
    assert_eq!(
        refused("", "\n"),
        warning(5, 1, "`#pragma scop`", "the region contains no statement")
    );
}

#[test]
fn a_refused_region_does_not_affect_the_others() {
    let src = "void f(int n, double B[100])
{
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    B[i] = B[i] * B[i];
#pragma endscop
#pragma scop
  while (n > 0) n--;
#pragma endscop
}
";
    let (file, diags) = parse(src);
    assert_eq!(file.scops.len(), 1);
    assert_eq!(file.scops[0].loc.line, 4);
    let shown: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
    assert_eq!(
        shown,
        warning(
            9,
            3,
            "`while (n > 0) n--`",
            "only `for` loops with affine bounds are supported"
        )
    );
}

#[test]
fn loop_counter_read_after_the_region() {
    let src = "double f(int n, double B[100])
{
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    B[i] = 0;
#pragma endscop
  return B[i - 1];
}
";
    assert_eq!(
        refusals(src),
        warning(
            8,
            12,
            "`i`",
            "a loop counter of the region is used after it, but its final value is not kept"
        )
    );
}

#[test]
fn loop_counter_read_before_the_region_inside_a_loop_around_it() {
    let src = "void f(int n, double B[100])
{
  int i = 0, t;
  for (t = 0; t < 3; t++) {
    B[0] += i;
#pragma scop
    for (i = 0; i < n; i++)
      B[i] = 0;
#pragma endscop
  }
}
";
    assert_eq!(
        refusals(src),
        warning(
            5,
            13,
            "`i`",
            "a loop counter of the region is used after it, but its final value is not kept"
        )
    );
}

#[test]
fn loop_counter_reinitialized_by_a_later_loop_is_fine() {
    let src = "void f(int n, double B[100])
{
  int i;
#pragma scop
  for (i = 0; i < n; i++)
    B[i] = 0;
#pragma endscop
  for (i = 1; i < n; i++)
    B[i] += B[i - 1];
}
";
    let (file, diags) = parse(src);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(file.scops.len(), 1);
}

#[test]
fn static_loop_counter() {
    // The generated code does not leave the counter at its final value, which the next call
    // of the function would see.
    assert_eq!(
        refused(
            "static int s;",
            "  for (s = 0; s < n; s++)\n    B[s] = 0;\n"
        ),
        warning(6, 8, "`s = 0`", "the loop counter must not be `static`")
    );
}

#[test]
fn a_comma_expression_assigned() {
    assert_eq!(
        refused(
            "",
            "  for (i = 0; i < n; i++)\n    B[i] = (A[i][0] = 1, 2);\n"
        ),
        warning(
            7,
            5,
            "`B[i] = (A[i][0] = 1, 2)`",
            "a comma expression assigned is not supported"
        )
    );
}

#[test]
fn an_increment_inside_an_expression() {
    assert_eq!(
        refused("", "  for (i = 0; i < n; i++)\n    B[i] += A[i][0]++;\n"),
        warning(
            7,
            13,
            "`A[i][0]++`",
            "side effects nested inside an expression are not supported"
        )
    );
}
