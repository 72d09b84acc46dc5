//! A deterministic, line-oriented text form of a [`Scop`], for `--emit scop` and for tests.
//!
//! Body pieces are shown inline: `${i}` is an iterator piece (by the statement's iterator name)
//! and `@{A}` a variable piece (by the array's C name); everything else is the verbatim text.

use std::fmt::Write as _;

use crate::{AccessKind, BodyPiece, Scop, Storage};

/// Renders `scop` as text: header, parameters, arrays, then one block per statement.
pub fn scop_to_string(scop: &Scop) -> String {
    let mut out = String::new();
    let storage = Storage::name;
    let _ = writeln!(
        out,
        "scop in {} at {}:{} region {}..{} insert_at {}",
        scop.function,
        scop.loc.line,
        scop.loc.col,
        scop.region.start,
        scop.region.end,
        scop.insert_at
    );
    for p in &scop.params {
        let _ = writeln!(out, "param {}: {} {}", p.name, p.c_type, storage(p.storage));
    }
    let _ = writeln!(out, "context {}", scop.context);
    for a in &scop.arrays {
        let _ = writeln!(
            out,
            "array {} {}{}: {} rank {} {}{}",
            a.id,
            a.name,
            if a.isl_name == a.name {
                String::new()
            } else {
                format!(" (isl {})", a.isl_name)
            },
            a.elem_type,
            a.rank,
            storage(a.storage),
            if a.written { " written" } else { "" }
        );
    }
    for s in &scop.statements {
        let mut body = String::new();
        for piece in &s.body {
            match piece {
                BodyPiece::Text(t) => body.push_str(t),
                BodyPiece::Iter(k) => {
                    let name = s.iterators.get(*k).map(String::as_str).unwrap_or("?");
                    let _ = write!(body, "${{{name}}}");
                }
                BodyPiece::Var(id) => {
                    let name = scop
                        .arrays
                        .get(id.index())
                        .map(|a| a.name.as_str())
                        .unwrap_or("?");
                    let _ = write!(body, "@{{{name}}}");
                }
            }
        }
        let _ = writeln!(out, "{} at {}:{}: {}", s.id, s.loc.line, s.loc.col, body);
        let _ = writeln!(out, "  domain {}", s.domain);
        let _ = writeln!(out, "  schedule {}", s.schedule);
        for a in &s.accesses {
            let kind = match a.kind {
                AccessKind::Read => "read",
                AccessKind::Write => "write",
            };
            let _ = writeln!(out, "  {kind} {}", a.relation);
        }
    }
    out
}
