//! Property tests of the frontend on hostile input: arbitrary bytes, soups of C tokens, and the
//! 30 PolyBench kernels mutated token by token (deleted, duplicated, replaced). Whatever the
//! input, the frontend must not panic, every diagnostic (libclang's and ours) must carry
//! `file:line:col`, and every SCoP it returns must describe a valid region of the text.
//!
//! Case counts are bounded so that the whole file runs in seconds (each case is one libclang
//! parse); `PROPTEST_CASES` raises them for a longer hunt.

use std::path::PathBuf;
use std::sync::OnceLock;

use frontend::{ir, parse_source, scop_to_string, Diagnostic, Error, Options, ScopMode};
use proptest::prelude::*;
use proptest::test_runner::Config;

fn config(cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate lies in the workspace")
        .to_path_buf()
}

/// `file:line:col: severity: message` with a non-empty file and positive line and column.
fn check_diagnostic(d: &Diagnostic) -> Result<(), TestCaseError> {
    prop_assert!(!d.file.is_empty(), "no file: {d}");
    prop_assert!(d.loc.line >= 1 && d.loc.col >= 1, "no line:col: {d}");
    let shown = d.to_string();
    let prefix = format!("{}:{}:{}: {}: ", d.file, d.loc.line, d.loc.col, d.severity);
    prop_assert!(shown.starts_with(&prefix), "{shown}");
    Ok(())
}

/// Parses `text` (named `path`) under `mode` and checks the properties.
fn check(path: &str, text: &str, mode: ScopMode, args: &[String]) -> Result<(), TestCaseError> {
    let opts = Options {
        clang_args: args.to_vec(),
        scop: mode,
        ..Options::default()
    };
    match parse_source(path, text, &opts) {
        Ok((file, diags)) => {
            for d in &diags {
                check_diagnostic(d)?;
            }
            check_scops(text, &file)?;
        }
        Err(Error::Parse(diags)) => {
            prop_assert!(!diags.is_empty(), "a parse error without diagnostics");
            for d in &diags {
                check_diagnostic(d)?;
            }
        }
        Err(e) => prop_assert!(false, "unexpected error kind: {e}"),
    }
    Ok(())
}

/// Regions lie in the text, on character boundaries, in order and without overlap; each SCoP
/// prints.
fn check_scops(text: &str, file: &ir::SourceFile) -> Result<(), TestCaseError> {
    let mut end = 0;
    for s in &file.scops {
        prop_assert!(s.region.start >= end && s.region.start < s.region.end);
        prop_assert!(s.region.end <= text.len());
        prop_assert!(text.is_char_boundary(s.region.start) && text.is_char_boundary(s.region.end));
        prop_assert!(s.insert_at <= s.region.start);
        prop_assert!(!s.statements.is_empty());
        end = s.region.end;
        let _ = scop_to_string(s);
    }
    Ok(())
}

/// The kernels' texts, each with its path (so that `#include "<kernel>.h"` resolves).
fn kernels() -> &'static [(String, String)] {
    static KERNELS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    KERNELS.get_or_init(|| {
        let dir = repo().join("polybench/kernels");
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("kernels directory") {
            let entry = entry.expect("entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path().join(format!("{name}.c"));
            if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path.display().to_string(), text));
            }
        }
        out.sort();
        assert_eq!(out.len(), 30, "the 30 PolyBench kernels");
        out
    })
}

fn kernel_args() -> Vec<String> {
    vec![
        "-I".to_string(),
        repo().join("polybench/utilities").display().to_string(),
        "-DMINI_DATASET".to_string(),
    ]
}

/// Splits C text into tokens: identifiers and numbers, runs of blanks, and single other
/// characters (good enough to mutate: the frontend must survive whatever comes out).
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let len = if c.is_ascii_alphanumeric() || c == '_' {
            rest.find(|d: char| !(d.is_ascii_alphanumeric() || d == '_'))
                .unwrap_or(rest.len())
        } else if c.is_whitespace() {
            rest.find(|d: char| !d.is_whitespace())
                .unwrap_or(rest.len())
        } else {
            c.len_utf8()
        };
        out.push(&rest[..len]);
        rest = &rest[len..];
    }
    out
}

/// Tokens that steer C toward the interesting cases.
const VOCABULARY: &[&str] = &[
    "for",
    "if",
    "else",
    "while",
    "return",
    "break",
    "goto",
    "int",
    "double",
    "unsigned",
    "i",
    "j",
    "n",
    "A",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ";",
    "=",
    "+=",
    "<",
    "<=",
    ">",
    "-",
    "*",
    "/",
    "%",
    "?",
    ":",
    "&&",
    "||",
    "!",
    "0",
    "1",
    "-1",
    "2147483647",
    "9223372036854775807",
    "&",
    "++",
    "--",
    ",",
    "sqrt",
    "f",
    "x",
    "\n#pragma scop\n",
    "\n#pragma endscop\n",
    "\n#if 0\n",
    "\n#endif\n",
    "#",
    "\"",
    "'",
    "/*",
    "*/",
    "\\",
    "tf_x",
    "S0",
    "floor",
    "restrict",
];

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Replace(usize, usize),
}

fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut toks: Vec<&str> = tokens(text);
    for m in mutations {
        if toks.is_empty() {
            break;
        }
        let at = |k: usize| k % toks.len();
        match *m {
            Mutation::Delete(k) => {
                toks.remove(at(k));
            }
            Mutation::Duplicate(k) => {
                let k = at(k);
                toks.insert(k, toks[k]);
            }
            Mutation::Replace(k, v) => {
                let k = at(k);
                toks[k] = VOCABULARY[v % VOCABULARY.len()];
            }
        }
    }
    toks.concat()
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(k, v)| Mutation::Replace(k, v)),
    ]
}

/// Mutations land where they matter: mostly inside the kernel function.
fn kernel_and_mutations() -> impl Strategy<Value = (usize, Vec<Mutation>, bool)> {
    (
        0..30usize,
        proptest::collection::vec(mutation(), 1..6),
        any::<bool>(),
    )
}

/// Restricts a mutation's position to the tokens of the kernel function (from its name to the
/// end of the file), where the SCoP is.
fn focus(text: &str, mutations: Vec<Mutation>) -> String {
    let start = text.find("static void kernel_").unwrap_or(0);
    let (head, tail) = text.split_at(start);
    format!("{head}{}", mutate(tail, &mutations))
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300), auto in any::<bool>()) {
        let text = String::from_utf8_lossy(&bytes);
        let mode = if auto { ScopMode::Auto } else { ScopMode::PragmaIfPresent };
        check("bytes.c", &text, mode, &[])?;
    }

    #[test]
    fn soups_of_c_tokens(
        picks in proptest::collection::vec(0..VOCABULARY.len(), 0..120),
        auto in any::<bool>(),
    ) {
        let body: Vec<&str> = picks.iter().map(|&k| VOCABULARY[k]).collect();
        let text = format!(
            "double A[10][10], x;\nvoid f(int n, double B[n])\n{{\n  int i, j;\n{}\n}}\n",
            body.join(" ")
        );
        let mode = if auto { ScopMode::Auto } else { ScopMode::PragmaIfPresent };
        check("soup.c", &text, mode, &[])?;
    }

    #[test]
    fn mutated_kernels((k, mutations, auto) in kernel_and_mutations()) {
        let (path, text) = &kernels()[k];
        let mutated = focus(text, mutations);
        let mode = if auto { ScopMode::Auto } else { ScopMode::PragmaIfPresent };
        check(path, &mutated, mode, &kernel_args())?;
    }
}

/// Without mutation, every kernel parses, and under `--scop auto` too (its nests are found or
/// refused with notes, never a panic).
#[test]
fn unmutated_kernels_pass_the_same_checks() {
    for (path, text) in kernels() {
        for mode in [ScopMode::PragmaIfPresent, ScopMode::Auto] {
            if let Err(e) = check(path, text, mode, &kernel_args()) {
                panic!("{path}: {e}");
            }
        }
    }
}

#[test]
fn the_tokenizer_keeps_every_byte() {
    for (_, text) in kernels() {
        assert_eq!(tokens(text).concat(), *text);
    }
}
