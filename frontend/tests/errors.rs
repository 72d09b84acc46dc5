//! Whole-file failures (unreadable file, libclang errors), the diagnostics' text form, the
//! user's compiler flags, and inputs that must never make the frontend panic.

mod common;

use frontend::ir::Loc;
use frontend::{parse_file, parse_source, Diagnostic, DiagnosticKind, Error, Options, Severity};
use pretty_assertions::assert_eq;

#[test]
fn syntax_error_is_a_parse_error_with_its_location() {
    let src = "void f(void)\n{\n  int x = ;\n}\n";
    let Err(Error::Parse(diags)) = parse_source("bad.c", src, &Options::default()) else {
        panic!("expected a parse error");
    };
    let errors: Vec<&Diagnostic> = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].file, "bad.c");
    assert_eq!(errors[0].loc, Loc { line: 3, col: 11 });
    assert_eq!(
        errors[0].to_string(),
        "bad.c:3:11: error: expected expression"
    );
}

#[test]
fn semantic_error_inside_a_scop_is_a_parse_error_too() {
    let src = "void f(void)\n{\n#pragma scop\n  undeclared[0] = 1;\n#pragma endscop\n}\n";
    let Err(Error::Parse(diags)) = parse_source("bad.c", src, &Options::default()) else {
        panic!("expected a parse error");
    };
    assert!(
        diags
            .iter()
            .any(|d| d.severity == Severity::Error && d.loc.line == 4),
        "{diags:?}"
    );
}

#[test]
fn error_display_lists_every_diagnostic() {
    let src = "int f(void) { return ; }\nint g(void) { return 1 +; }\n";
    let err = parse_source("two.c", src, &Options::default()).expect_err("two errors");
    let shown = err.to_string();
    let lines: Vec<&str> = shown.lines().filter(|l| l.contains(": error: ")).collect();
    assert_eq!(lines.len(), 2, "{shown}");
    assert!(lines[0].starts_with("two.c:1:"), "{shown}");
    assert!(lines[1].starts_with("two.c:2:"), "{shown}");
}

#[test]
fn missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("absent.c");
    match parse_file(&path, &Options::default()) {
        Err(Error::Io { path: p, source }) => {
            assert_eq!(p, path.to_string_lossy());
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[test]
fn non_utf8_file_is_an_io_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("latin1.c");
    std::fs::write(&path, b"/* caf\xe9 */ int x;\n").expect("write");
    match parse_file(&path, &Options::default()) {
        Err(Error::Io { source, .. }) => assert_eq!(source.kind(), std::io::ErrorKind::InvalidData),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[test]
fn parse_file_reads_includes_relative_to_the_file_and_user_flags() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("sizes.h"), "#define LEN 8\n").expect("write header");
    let src = "#include \"sizes.h\"\nvoid f(double B[LEN])\n{\n  int i;\n#pragma scop\n  for (i = 0; i < LEN + EXTRA; i++)\n    B[i] = 0;\n#pragma endscop\n}\n";
    let path = dir.path().join("k.c");
    std::fs::write(&path, src).expect("write source");
    let opts = Options {
        clang_args: vec!["-DEXTRA=2".to_string()],
        ..Options::default()
    };
    let (file, diags) = parse_file(&path, &opts).expect("parses");
    assert!(diags.is_empty());
    assert_eq!(
        file.scops[0].statements[0].domain,
        "{ S0[i] : i >= 0 and i <= 9 }"
    );
    // Without the definition, EXTRA is undeclared: libclang's error, with the file name.
    let Err(Error::Parse(diags)) = parse_file(&path, &Options::default()) else {
        panic!("expected a parse error");
    };
    let error = diags
        .iter()
        .find(|d| d.severity == Severity::Error)
        .expect("an error");
    assert_eq!(
        (error.file.as_str(), error.loc.line),
        (path.to_string_lossy().as_ref(), 6)
    );
}

#[test]
fn files_without_a_c_extension_are_read_as_c() {
    let src = "void f(double B[4])\n{\n#pragma scop\n  B[0] = 1;\n#pragma endscop\n}\n";
    let (file, diags) = parse_source("kernel", src, &Options::default()).expect("parses as C");
    assert!(diags.is_empty());
    assert_eq!(file.scops.len(), 1);
}

#[test]
fn diagnostic_display_format() {
    let d = Diagnostic {
        severity: Severity::Warning,
        file: "k.c".to_string(),
        loc: Loc { line: 12, col: 5 },
        kind: DiagnosticKind::NotScop {
            what: "`x`".to_string(),
            why: "why".to_string(),
        },
    };
    assert_eq!(
        d.to_string(),
        "k.c:12:5: warning: not a static control part: `x` (why)"
    );
}

#[test]
fn odd_inputs_never_panic() {
    let inputs = [
        "",
        "#pragma scop\n",
        "#pragma endscop\n#pragma endscop\n",
        "void f(void) {\n#pragma scop\n}\n#pragma endscop\n",
        "void f(void) {\n#pragma scop\n#pragma scop\n#pragma endscop\n}\n",
        "void f(void) {\n#pragma scop extra\n#pragma endscop\n}\n",
        "void f(int n) { int i;\n#pragma scop\n  for (;;) n = 1;\n#pragma endscop\n}\n",
        "void f(int n) { int i;\n#pragma scop\n  for (i = 0; i < n; ) n = 1;\n#pragma endscop\n}\n",
        "void f(int n, int *p) { int i;\n#pragma scop\n  for (i = 0; i < 2147483647 * 4; i++) p[i] = 0;\n#pragma endscop\n}\n",
        "void f(int n, int *p) { int i;\n#pragma scop\n  for (i = 0; i < n; i += 0) p[i] = 0;\n#pragma endscop\n}\n",
        "void f(int n, int *p) { int i;\n#pragma scop\n  for (i = 0; i < n; i++) p[i / 0] = 0;\n#pragma endscop\n}\n",
        "void f(int n, int *p) { int i;\n#pragma scop\n  for (i = 0; i < n; i++) p[i] = p[i ? i ? i ? i ? i ? i ? 1 : 2 : 3 : 4 : 5 : 6 : 7];\n#pragma endscop\n}\n",
        "void f(int n, int **p) { int i;\n#pragma scop\n  for (i = 0; i < n; i++) p[i][i] = 0;\n#pragma endscop\n}\n",
        "void f(int n, int *p) { int i;\n#pragma scop\n  p[(n > 0 ? n : -n) % 3 / 2 % 5 / 7] = 1;\n#pragma endscop\n}\n",
        "void f(int n, int *p) { int i;\n#pragma scop\n  for (i = 0; i < 9223372036854775807L; i++) p[i * 9223372036854775807L * 9223372036854775807L] = 0;\n#pragma endscop\n}\n",
    ];
    for src in inputs {
        // Either outcome is fine; reaching the end without a panic is the point.
        let _ = parse_source("odd.c", src, &Options::default());
    }
    // Deep nesting: the tree is cut off and the region refused, not a stack overflow.
    let deep = format!(
        "void f(int *p) {{\n#pragma scop\n  p[0] = {}1{};\n#pragma endscop\n}}\n",
        "(".repeat(240),
        ")".repeat(240)
    );
    let (file, diags) = parse_source("deep.c", &deep, &Options::default()).expect("parses");
    assert!(file.scops.is_empty());
    assert_eq!(diags.len(), 1);
    assert!(
        diags[0].message().contains("nested too deeply"),
        "{}",
        diags[0]
    );
}

#[test]
fn overflowing_constants_are_refused_not_wrapped() {
    let src = "void f(long *p) { long i;\n#pragma scop\n  for (i = 0; i < 4; i++) p[i * 9223372036854775807L * 9223372036854775807L * 9223372036854775807L] = 0;\n#pragma endscop\n}\n";
    let lines = common::refusals(src);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].contains("integer overflow in constant arithmetic"),
        "{}",
        lines[0]
    );
}

#[test]
fn every_diagnostic_has_a_location_even_past_the_error_limit() {
    // libclang stops after 20 errors with "too many errors emitted", a diagnostic of its own
    // without a location: it gets the location of the error before it.
    let src: String = (1..=30)
        .map(|k| format!("int f{k}(void) {{ return ; }}\n"))
        .collect();
    let Err(Error::Parse(diags)) = parse_source("many.c", &src, &Options::default()) else {
        panic!("expected a parse error");
    };
    let last = diags.last().expect("diagnostics");
    assert!(last.message().contains("too many errors"), "{last}");
    let before = &diags[diags.len() - 2];
    assert_eq!(
        (last.file.as_str(), last.loc),
        (before.file.as_str(), before.loc)
    );
    assert!(
        diags
            .iter()
            .all(|d| d.file == "many.c" && d.loc.line >= 1 && d.loc.col >= 1),
        "{diags:?}"
    );
}
