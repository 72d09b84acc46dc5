//! What the driver tells the user about a file, typed: each diagnostic has a severity, a place
//! and a [`Kind`] that says what it is about, and is rendered only at the edge (`Display`: the
//! `file:line:col: warning: ...` lines; [`Diagnostic::json`]: one object for tools and editors,
//! `tiledflow --diagnostics=json` and tiledflow-cc's `--tiledflow-report`). Decisions (strict
//! mode, which notes to show, the reasons a report groups by) read the kind and the severity,
//! never the rendered text.

use std::fmt;

pub use frontend::Severity;

/// One message about one place of the input, or about the whole file (`loc: None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The file as named by the user.
    pub file: String,
    /// Line and column (from 1); `None` for the file as a whole.
    pub loc: Option<(u32, u32)>,
    pub kind: Kind,
}

/// What a [`Diagnostic`] is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A region that is not a static control part (the frontend's refusal): the construct as
    /// written and the reason.
    NotScop { what: String, why: String },
    /// One of libclang's own diagnostics.
    Clang(String),
    /// The file has no static control part; it is unchanged.
    NoScop,
    /// A SCoP that a later stage could not handle, left as written.
    ScopLeft { cause: Cause, why: String },
    /// What `--autotune` did instead of timing, or could not do.
    Autotune(String),
    /// A SCoP of the cuda target that stays on the CPU, and why.
    StaysOnCpu(String),
    /// A warning of the polyhedral stage about a SCoP it did transform.
    Polyhedral(String),
}

/// Why a SCoP was left as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The stages do not handle what it does (the user's code is fine).
    Unsupported,
    /// Its compilation took longer than `--scop-time-limit`.
    TimeLimit,
    /// The compiler failed (a tiledflow bug), in the named stage when known.
    Internal { stage: Option<String> },
}

impl Diagnostic {
    /// A diagnostic of the frontend, as the driver reports it.
    pub fn from_frontend(d: &frontend::Diagnostic) -> Diagnostic {
        Diagnostic {
            severity: d.severity,
            file: d.file.clone(),
            loc: Some((d.loc.line, d.loc.col)),
            kind: match &d.kind {
                frontend::DiagnosticKind::NotScop { what, why } => Kind::NotScop {
                    what: what.clone(),
                    why: why.clone(),
                },
                frontend::DiagnosticKind::Clang(m) => Kind::Clang(m.clone()),
            },
        }
    }

    /// A diagnostic about a SCoP starting at `line:col` of `file`.
    pub fn at(severity: Severity, file: &str, line: u32, col: u32, kind: Kind) -> Diagnostic {
        Diagnostic {
            severity,
            file: file.to_string(),
            loc: Some((line, col)),
            kind,
        }
    }

    /// The message as the user reads it, without the place and the severity.
    pub fn message(&self) -> String {
        match &self.kind {
            Kind::NotScop { what, why } => format!("not a static control part: {what} ({why})"),
            Kind::Clang(m) | Kind::Polyhedral(m) => m.clone(),
            Kind::NoScop => "no static control part found; the file is unchanged".to_string(),
            Kind::ScopLeft { why, .. } => format!("SCoP left as written: {why}"),
            Kind::Autotune(m) => format!("--autotune: {m}"),
            Kind::StaysOnCpu(why) => format!("SCoP stays on the CPU (--target cuda): {why}"),
        }
    }

    /// The kind's name in [`Diagnostic::json`]: `not-scop`, `clang`, `no-scop`, `scop-left`,
    /// `autotune`, `stays-on-cpu`, `polyhedral`.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            Kind::NotScop { .. } => "not-scop",
            Kind::Clang(_) => "clang",
            Kind::NoScop => "no-scop",
            Kind::ScopLeft { .. } => "scop-left",
            Kind::Autotune(_) => "autotune",
            Kind::StaysOnCpu(_) => "stays-on-cpu",
            Kind::Polyhedral(_) => "polyhedral",
        }
    }

    /// The reason alone, where the kind has one (what a report groups by): the frontend's
    /// refusal reason, why a SCoP was left as written (`internal error` for the compiler's own
    /// failures, whose messages differ), why a SCoP stays on the CPU.
    pub fn reason(&self) -> Option<String> {
        match &self.kind {
            Kind::NotScop { why, .. } => Some(why.clone()),
            Kind::ScopLeft { cause, why } => Some(match cause {
                Cause::Unsupported => why.clone(),
                Cause::TimeLimit => "compile time limit".to_string(),
                Cause::Internal { .. } => "internal error".to_string(),
            }),
            Kind::StaysOnCpu(why) => Some(why.clone()),
            _ => None,
        }
    }

    /// The diagnostic as one JSON object: `file`, `line` and `column` (absent for the whole
    /// file), `severity`, `kind` ([`Diagnostic::kind_name`]), `message` (as rendered), and
    /// `construct`, `reason`, `stage` where the kind has them.
    pub fn json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "file": self.file,
            "severity": self.severity.to_string(),
            "kind": self.kind_name(),
            "message": self.message(),
        });
        if let Some((line, col)) = self.loc {
            v["line"] = line.into();
            v["column"] = col.into();
        }
        if let Some(reason) = self.reason() {
            v["reason"] = reason.into();
        }
        match &self.kind {
            Kind::NotScop { what, .. } => v["construct"] = what.clone().into(),
            Kind::ScopLeft {
                cause: Cause::Internal { stage: Some(stage) },
                ..
            } => v["stage"] = stage.clone().into(),
            _ => {}
        }
        v
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.loc {
            Some((line, col)) => write!(f, "{}:{line}:{col}: ", self.file)?,
            None => write!(f, "{}: ", self.file)?,
        }
        write!(f, "{}: {}", self.severity, self.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_as_compilers_do_and_groups_by_reason() {
        let left = Diagnostic::at(
            Severity::Warning,
            "a.c",
            3,
            5,
            Kind::ScopLeft {
                cause: Cause::Internal {
                    stage: Some("schedule".into()),
                },
                why: "internal error (stage `schedule`): boom".into(),
            },
        );
        assert_eq!(
            left.to_string(),
            "a.c:3:5: warning: SCoP left as written: internal error (stage `schedule`): boom"
        );
        assert_eq!(left.reason().as_deref(), Some("internal error"));
        let j = left.json();
        assert_eq!(j["kind"], "scop-left");
        assert_eq!(j["stage"], "schedule");
        assert_eq!(j["line"], 3);
        let whole = Diagnostic {
            severity: Severity::Note,
            file: "b.c".into(),
            loc: None,
            kind: Kind::NoScop,
        };
        assert_eq!(
            whole.to_string(),
            "b.c: note: no static control part found; the file is unchanged"
        );
        assert!(whole.json().get("line").is_none());
        assert_eq!(whole.reason(), None);
    }
}
