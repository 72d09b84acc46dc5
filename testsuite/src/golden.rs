//! Stage tests as data: a file of `testsuite/data/stages/` (or any directory the caller names)
//! says, in its leading `// tiledflow ARGS` lines, which forms of the compiler's stages to print
//! (`--emit scop`, `deps`, `schedule`, `tiles`, `tasks`, or the C of a target); the runner runs
//! `tiledflow` on the file (or on the `.c` path that ARGS start with, relative to the file) once
//! per line, on [`crate::REFERENCE_MACHINE`], and the outputs, each under a `== tiledflow ARGS`
//! line, must equal the file's `.expected` beside it. `TILEDFLOW_BLESS=1` rewrites the
//! expectations instead of comparing (review the diff: a file's comments say what was checked by
//! hand). The SCoP goldens of the PolyBench kernels use the same comparison ([`compare_or_bless`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::paths::tool_path;

/// The argument lists of the leading `// tiledflow ARGS` lines of `text`.
pub fn runs(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .take_while(|l| l.starts_with("//"))
        .filter_map(|l| l.strip_prefix("// tiledflow "))
        .map(|args| args.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// Whether expectations are rewritten (`TILEDFLOW_BLESS=1`) instead of compared.
pub fn blessing() -> bool {
    std::env::var_os("TILEDFLOW_BLESS").is_some_and(|v| v == "1")
}

/// Compares `actual` with the file `expected` (or writes it there when [`blessing`]); `Err`
/// shows both.
pub fn compare_or_bless(what: &str, actual: &str, expected: &Path) -> Result<(), String> {
    if blessing() {
        return std::fs::write(expected, actual)
            .map_err(|e| format!("{}: {e}", expected.display()));
    }
    let want = std::fs::read_to_string(expected)
        .map_err(|e| format!("{}: {e} (TILEDFLOW_BLESS=1 creates it)", expected.display()))?;
    match want == actual {
        true => Ok(()),
        false => Err(format!(
            "{what} differs from {}\n--- expected\n{want}\n--- actual\n{actual}",
            expected.display()
        )),
    }
}

/// What the stage file `path` prints: each run's arguments on a `== tiledflow ARGS` line, then
/// its standard output. A run that fails, or prints on standard error, is an error.
pub fn stage_output(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default();
    let runs = runs(&text);
    if runs.is_empty() {
        return Err(format!(
            "{}: no leading `// tiledflow ARGS` line",
            path.display()
        ));
    }
    let tiledflow = tool_path("tiledflow").map_err(|e| e.to_string())?;
    let mut out = String::new();
    for args in runs {
        let (input, rest): (PathBuf, &[String]) = match args.first() {
            Some(first) if first.ends_with(".c") => (PathBuf::from(first), &args[1..]),
            _ => (PathBuf::from(name), &args[..]),
        };
        let ran = Command::new(&tiledflow)
            .current_dir(dir)
            .envs(crate::REFERENCE_MACHINE)
            .arg(&input)
            .args(rest)
            .output()
            .map_err(|e| format!("tiledflow: {e}"))?;
        let stderr = String::from_utf8_lossy(&ran.stderr);
        if !ran.status.success() || !stderr.is_empty() {
            return Err(format!(
                "{}: tiledflow {}: {}\n{stderr}",
                path.display(),
                args.join(" "),
                crate::describe_status(ran.status)
            ));
        }
        out.push_str(&format!("== tiledflow {}\n", args.join(" ")));
        out.push_str(&String::from_utf8_lossy(&ran.stdout));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn the_leading_comment_lines_name_the_runs() {
        let text = "// tiledflow --emit tiles\n// What was checked.\n// tiledflow ../a.c --emit deps -DN=4\nint x;\n// tiledflow --emit c\n";
        assert_eq!(
            runs(text),
            vec![
                vec!["--emit".to_string(), "tiles".to_string()],
                vec![
                    "../a.c".to_string(),
                    "--emit".to_string(),
                    "deps".to_string(),
                    "-DN=4".to_string()
                ],
            ]
        );
        assert!(runs("int x;\n// tiledflow --emit tiles\n").is_empty());
    }
}
