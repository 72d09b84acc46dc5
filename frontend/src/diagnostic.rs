//! Diagnostics and errors of the frontend: what the user sees as `file:line:col: warning: ...`.

use std::fmt;

use crate::ir::Loc;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// A message about one place of the input: a SCoP that was not extracted (and why), or one of
/// libclang's own diagnostics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The file as named by the user (or by libclang, for headers).
    pub file: String,
    pub loc: Loc,
    pub kind: Kind,
}

/// What a [`Diagnostic`] says, by kind (so that tools can tell them apart without reading the
/// rendered text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A region (a pragma region, or a loop nest under `--scop auto`) that is not a static control
    /// part: the offending construct as written (`what`) and the reason (`why`).
    NotScop { what: String, why: String },
    /// One of libclang's own diagnostics, as it words it.
    Clang(String),
}

impl Diagnostic {
    /// The message as the user reads it, without the place and the severity.
    pub fn message(&self) -> String {
        match &self.kind {
            Kind::NotScop { what, why } => format!("not a static control part: {what} ({why})"),
            Kind::Clang(message) => message.clone(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file,
            self.loc.line,
            self.loc.col,
            self.severity,
            self.message()
        )
    }
}

/// Why a file could not be turned into SCoPs at all.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read (or is not UTF-8).
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// libclang reported errors (syntax or semantic errors): all of its diagnostics, errors first
    /// in source order as libclang gave them.
    #[error("{}", display_all(.0))]
    Parse(Vec<Diagnostic>),
    /// libclang could not be loaded or used.
    #[error("libclang: {0}")]
    Clang(String),
}

fn display_all(diags: &[Diagnostic]) -> String {
    let lines: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
    lines.join("\n")
}
