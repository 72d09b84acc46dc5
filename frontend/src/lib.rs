//! C source to [`ir::Scop`]: parses with libclang 19 and extracts static control parts.
//!
//! Owns: libclang (all of it lives in the `clang` module), SCoP detection, affine expression
//! extraction, diagnostics with `file:line:col`. Produces plain data ([`ir`], the `scop-ir` crate,
//! re-exported here with its printer and [`lanes`]); never links ISL.
//!
//! Pipeline inside the crate: `clang` lowers the translation unit to owned data; `pragma` finds
//! the `#pragma scop` / `#pragma endscop` regions in the main file's tokens, or, without them
//! (see [`ScopMode`]), `auto` finds the maximal affine loop nests; `scop` walks the statements
//! of each region and builds the [`ir::Scop`] with the help of `affine` (quasi-affine
//! expressions and conditions printed in ISL syntax), and `macros` lists the macro definitions
//! its statements need to compile outside the file (kernels of other targets). A region that
//! is not a static control part is dropped with a [`Diagnostic`] (a warning for a pragma
//! region, a note for a nest found automatically) and stays as written. [`scop_to_string`]
//! (`scop-ir`'s) prints a SCoP as text (`--emit scop`, tests).
//!
//! Semantics: every ISL string describes exactly what the C code does. In particular C's `/`
//! and `%` truncate towards zero: a dividend proven non-negative uses `floor`/`mod` directly,
//! any other is split into its non-negative and negative cases (a disjunction), never
//! approximated. Unsigned arithmetic (which wraps) is refused.
//!
//! Architecture invariants: no ISL object exists in this crate (ISL syntax is only text); no
//! libclang handle leaves `clang`, the only module with `unsafe` code; libclang's warnings on a
//! file that parses are not repeated (the C compiler reports them), its errors are
//! [`Error::Parse`].

#![deny(unsafe_code)] // only the `clang` module may use unsafe code
#![forbid(unsafe_op_in_unsafe_fn)]

mod affine;
mod auto;
mod clang;
mod diagnostic;
mod macros;
mod pragma;
mod scop;
mod text;

use std::path::Path;

pub use diagnostic::{Diagnostic, Error, Kind as DiagnosticKind, Severity};
pub use scop_ir as ir;
pub use scop_ir::{lanes, scop_to_string};

/// Where the SCoPs of a file are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScopMode {
    /// `Pragma` when the file has a `#pragma scop` (outside code skipped by the
    /// preprocessor), `Auto` otherwise: a file marked by its author means exactly what the
    /// marks say, and a plain file still gets its loop nests parallelized (`tiledflow-cc` on
    /// code nobody annotated).
    #[default]
    PragmaIfPresent,
    /// Only the regions between `#pragma scop` and `#pragma endscop`. A region that is not a
    /// static control part gets a warning. The pragma is the user's promise that distinct
    /// arrays do not overlap.
    Pragma,
    /// The maximal affine loop nests of every function (pragmas ignored). A nest that is not a
    /// static control part is left as written with a note (not a warning); a nest that writes
    /// through a pointer which may alias another array of the nest is refused unless one of
    /// them is `restrict`.
    Auto,
}

/// How to parse: the user's compiler flags, and where to look for SCoPs.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Arguments passed to libclang (`-I`, `-D`, `-U`, `-std=...`).
    pub clang_args: Vec<String>,
    pub scop: ScopMode,
    /// Do not find the macros the SCoPs' statements need: [`ir::Scop::macros`] and
    /// [`ir::Scop::undefined_macros`] stay empty. Only code that compiles statements outside the
    /// user's file needs them (the CUDA kernels). Finding them takes libclang's record of the
    /// preprocessor's work, a third of its parse of a PolyBench kernel; without them the record is
    /// kept only when the file may have code the preprocessor skips (see [`may_skip_code`]).
    pub skip_macros: bool,
    /// In [`ScopMode::Auto`], a loop nest under a pragma of the user's (`#pragma omp parallel
    /// for`, `#pragma GCC ivdep`, any other, or `_Pragma(...)`) is a candidate like any other, and
    /// a SCoP made of it replaces the pragma too, with the conditional lines around it
    /// (`#ifdef _OPENMP` ... `#endif`) when they hold nothing else. By default such a nest is left
    /// as written, since the pragma applies to it.
    pub replace_pragmas: bool,
}

/// Reads and parses the C file at `path`; returns its SCoPs and the diagnostics about regions
/// that were not extracted.
pub fn parse_file(path: &Path, opts: &Options) -> Result<(ir::SourceFile, Vec<Diagnostic>), Error> {
    let name = path.to_string_lossy().into_owned();
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: name.clone(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| Error::Io {
        path: name.clone(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
    })?;
    parse_source(&name, &text, opts)
}

/// Parses `text` as the contents of the file `path_for_messages` (which need not exist; its
/// directory is where relative `#include "..."` are searched).
pub fn parse_source(
    path_for_messages: &str,
    text: &str,
    opts: &Options,
) -> Result<(ir::SourceFile, Vec<Diagnostic>), Error> {
    // The input is C whatever its name says (libclang would read a name without a known
    // extension as a precompiled AST), unless the user chose a language.
    let mut args = opts.clang_args.clone();
    if !args.iter().any(|a| a.starts_with("-x")) {
        args.splice(0..0, ["-x".to_string(), "c".to_string()]);
    }
    let record = !opts.skip_macros || may_skip_code(text);
    let parsed =
        clang::parse(path_for_messages, text, &args, record).map_err(|e| Error::Clang(e.0))?;
    if parsed
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error)
    {
        return Err(Error::Parse(parsed.diagnostics));
    }
    let (mut scops, diagnostics) = extract(path_for_messages, text, &parsed, opts);
    if opts.skip_macros {
        for scop in &mut scops {
            scop.macros.clear();
            scop.undefined_macros.clear();
        }
    }
    Ok((
        ir::SourceFile {
            path: path_for_messages.to_string(),
            text: text.to_string(),
            scops,
        },
        diagnostics,
    ))
}

/// Whether the preprocessor may skip code of `text` (a conditional directive: `#if`, `#ifdef`,
/// `#elif`, `#else`, `#endif`, ...). libclang reports the skipped ranges, which `#pragma scop`
/// detection needs, only with its preprocessing record. Errs on the side of yes: a `#` (or the
/// digraph `%:`, or the trigraph `??=`) followed by blanks and `if`, `el` or `endif`, or by a
/// comment or a line splice, anywhere in the text, strings and comments included.
pub fn may_skip_code(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut starts = (0..bytes.len()).filter_map(|i| {
        [&b"#"[..], b"%:", b"??="]
            .iter()
            .find(|p| bytes[i..].starts_with(p))
            .map(|p| i + p.len())
    });
    starts.any(|mut j| {
        while j < bytes.len() && matches!(bytes[j], b' ' | b'\t' | b'\x0b' | b'\x0c') {
            j += 1;
        }
        let rest = &bytes[j..];
        [&b"if"[..], b"el", b"endif", b"/*", b"\\"]
            .iter()
            .any(|p| rest.starts_with(p))
    })
}

/// Extracts the SCoPs of the file: its `#pragma scop` regions ([`scop::pragma_regions`]), or, in
/// auto mode, the maximal affine loop nests of every function ([`auto::find`]), whose refusals
/// are notes (a loop that is not a SCoP there is no mistake of the user's).
fn extract(
    path: &str,
    text: &str,
    parsed: &clang::ParsedFile,
    opts: &Options,
) -> (Vec<ir::Scop>, Vec<Diagnostic>) {
    let lines = text::LineIndex::new(text);
    let directives = pragma::directives(&parsed.tokens, &parsed.skipped, &lines);
    let auto = match opts.scop {
        ScopMode::Auto => true,
        ScopMode::Pragma => false,
        ScopMode::PragmaIfPresent => !directives
            .iter()
            .any(|d| d.pragma.as_deref() == Some("scop")),
    };
    if !auto {
        return scop::pragma_regions(path, text, parsed, &directives, &lines);
    }
    let (scops, refusals) = auto::find(text, parsed, &directives, &lines, opts.replace_pragmas);
    let notes = refusals
        .iter()
        .map(|r| Diagnostic {
            severity: Severity::Note,
            ..r.diagnostic(path, &lines)
        })
        .collect();
    (scops, notes)
}

#[cfg(test)]
mod tests {
    use super::may_skip_code;

    #[test]
    fn code_the_preprocessor_may_skip_is_seen_in_every_spelling() {
        for text in [
            "#if 0\nint x;\n#endif\n",
            "int a;\n  #  ifdef X\n#endif",
            "#ifndef Y\n#endif",
            "#define A 1\n#elif B\n",
            "%:if 0\n%:endif\n",
            "??=if 0\n",
            "#\t/* c */ if 0\n",
            "#\\\nif 0\n",
            "/* a\n */ #if 0\n#endif\n",
        ] {
            assert!(may_skip_code(text), "{text:?}");
        }
        for text in [
            "#include <stdio.h>\n#pragma scop\nint x;\n#pragma endscop\n",
            "#define N 10\n#undef N\n# include \"a.h\"\n",
            "int main(void) { return 0; }\n",
        ] {
            assert!(!may_skip_code(text), "{text:?}");
        }
    }
}
