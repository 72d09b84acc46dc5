//! Helpers shared by the frontend's integration tests: parse a C snippet held in memory and
//! show its SCoPs and diagnostics as text.

#![allow(dead_code)]

use frontend::{ir, parse_source, scop_to_string, Diagnostic, Options, ScopMode};

/// Parses `src` as `test.c`; panics (test failure) on a parse error.
pub fn parse(src: &str) -> (ir::SourceFile, Vec<Diagnostic>) {
    parse_with(src, ScopMode::default())
}

/// Parses `src` as `test.c` looking for SCoPs as `mode` says.
pub fn parse_with(src: &str, mode: ScopMode) -> (ir::SourceFile, Vec<Diagnostic>) {
    parse_opts(
        src,
        &Options {
            scop: mode,
            ..Options::default()
        },
    )
}

/// Parses `src` as `test.c` with `opts`.
pub fn parse_opts(src: &str, opts: &Options) -> (ir::SourceFile, Vec<Diagnostic>) {
    match parse_source("test.c", src, opts) {
        Ok(r) => r,
        Err(e) => panic!("unexpected error:\n{e}"),
    }
}

/// All SCoPs of `src` in text form, asserting that there are no diagnostics.
pub fn scops(src: &str) -> String {
    let (file, diags) = parse(src);
    let shown: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
    assert!(
        diags.is_empty(),
        "unexpected diagnostics:\n{}",
        shown.join("\n")
    );
    file.scops.iter().map(scop_to_string).collect()
}

/// The diagnostics of `src` as `file:line:col: severity: message` lines, asserting that no
/// SCoP was extracted.
pub fn refusals(src: &str) -> Vec<String> {
    let (file, diags) = parse(src);
    assert!(
        file.scops.is_empty(),
        "expected no SCoP, got:\n{}",
        file.scops.iter().map(scop_to_string).collect::<String>()
    );
    diags.iter().map(|d| d.to_string()).collect()
}

/// Wraps loop-nest text in a function `f(int n, int m, double A[100][100], double B[100],
/// double x)` between the pragmas. The `#pragma scop` line is line 5, so the first line of
/// `body` is line 6.
pub fn in_function(decls: &str, body: &str) -> String {
    format!(
        "void f(int n, int m, double A[100][100], double B[100], double x)\n{{\n  int i, j, k;\n  {decls}\n#pragma scop\n{body}#pragma endscop\n}}\n"
    )
}
