//! Reading the arrays a PolyBench-layout program dumps with `-DPOLYBENCH_DUMP_ARRAYS`.
//!
//! The format (written by `polybench/utilities/polybench.h`), on stderr:
//!
//! ```text
//! ==BEGIN DUMP_ARRAYS==
//! begin dump: A
//! 0.5 0.25 ...            (values separated by whitespace, any number per line)
//! end   dump: A
//! begin dump: B
//! ...
//! end   dump: B
//! ==END   DUMP_ARRAYS==
//! ```
//!
//! Text before and after the two markers is ignored (a runtime may print statistics there).
//! Values are kept as the program wrote them: the kernels print them so that they round-trip
//! exactly, so comparing the text compares the bits.

use anyhow::{bail, Result};

/// Marker opening the dump.
pub const BEGIN_MARKER: &str = "==BEGIN DUMP_ARRAYS==";
/// Marker closing the dump.
pub const END_MARKER: &str = "==END   DUMP_ARRAYS==";

/// One dumped array: its name and its values in row-major (flat) order, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpedArray {
    /// The name given to `POLYBENCH_DUMP_BEGIN`.
    pub name: String,
    /// The values, one per whitespace-separated token, in the order written.
    pub values: Vec<String>,
}

/// Parses the dump in a program's stderr. Errors (each naming the line, counted from 1 in
/// `stderr`): no dump, two dumps, a missing end marker, a value outside an array, an array not
/// closed or closed under another name, an array dumped twice.
pub fn parse_dump(stderr: &str) -> Result<Vec<DumpedArray>> {
    let mut arrays: Vec<DumpedArray> = Vec::new();
    let mut current: Option<(DumpedArray, usize)> = None;
    let mut state = State::Before;
    for (line_idx, line) in stderr.lines().enumerate() {
        let line_no = line_idx + 1;
        let trimmed = line.trim();
        match state {
            State::Before => {
                if trimmed == BEGIN_MARKER {
                    state = State::Inside;
                } else if trimmed == END_MARKER {
                    bail!("line {line_no}: `{END_MARKER}` before `{BEGIN_MARKER}`");
                }
                continue;
            }
            State::After => {
                if trimmed == BEGIN_MARKER {
                    bail!("line {line_no}: a second dump begins (the program dumped twice)");
                }
                continue;
            }
            State::Inside => {}
        }
        if trimmed == BEGIN_MARKER {
            bail!("line {line_no}: `{BEGIN_MARKER}` inside a dump");
        }
        if trimmed == END_MARKER {
            if let Some((open, opened_at)) = &current {
                bail!(
                    "line {line_no}: the dump ends while array `{}` (begun on line {opened_at}) is \
                     not closed",
                    open.name
                );
            }
            state = State::After;
            continue;
        }
        let tokens: Vec<&str> = trimmed.split_whitespace().collect();
        match tokens.as_slice() {
            ["begin", "dump:", name] => {
                if let Some((open, opened_at)) = &current {
                    bail!(
                        "line {line_no}: array `{name}` begins while `{}` (begun on line \
                         {opened_at}) is not closed",
                        open.name
                    );
                }
                if arrays.iter().any(|a| a.name == *name) {
                    bail!("line {line_no}: array `{name}` is dumped twice");
                }
                current = Some((DumpedArray { name: (*name).to_string(), values: Vec::new() }, line_no));
            }
            ["end", "dump:", name] => match current.take() {
                Some((array, _)) if array.name == *name => arrays.push(array),
                Some((array, opened_at)) => bail!(
                    "line {line_no}: `end dump: {name}` closes array `{}` (begun on line {opened_at})",
                    array.name
                ),
                None => bail!("line {line_no}: `end dump: {name}` without a matching begin"),
            },
            ["begin" | "end", "dump:", ..] => {
                bail!("line {line_no}: malformed array marker `{trimmed}` (expected one name)")
            }
            values => match &mut current {
                Some((array, _)) => array.values.extend(values.iter().map(|v| (*v).to_string())),
                None if values.is_empty() => {}
                None => bail!("line {line_no}: values outside any array: `{}`", values.join(" ")),
            },
        }
    }
    match state {
        State::Before => {
            bail!("no `{BEGIN_MARKER}` found (was the program built with -DPOLYBENCH_DUMP_ARRAYS?)")
        }
        State::Inside => {
            bail!("the dump is not closed: `{END_MARKER}` is missing (did the program stop early?)")
        }
        State::After => Ok(arrays),
    }
}

/// Where the parser is relative to the two markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Before,
    Inside,
    After,
}
