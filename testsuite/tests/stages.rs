//! The stage tests held as data: every `testsuite/data/stages/*.c` prints the forms its leading
//! `// tiledflow ARGS` lines ask for, which must equal its `.expected` (see
//! `testsuite::golden`; `TILEDFLOW_BLESS=1` rewrites them).

use testsuite::golden::{compare_or_bless, stage_output};
use testsuite::repo_root;

#[test]
fn every_stage_file_prints_what_it_expects() {
    let dir = repo_root().join("testsuite/data/stages");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the stage files' directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no stage files in {}", dir.display());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let result = stage_output(file).and_then(|actual| {
                // Printers are deterministic: a second run prints the same bytes.
                match stage_output(file)? == actual {
                    true => compare_or_bless(
                        &file.display().to_string(),
                        &actual,
                        &file.with_extension("expected"),
                    ),
                    false => Err(format!("{}: output differs between runs", file.display())),
                }
            });
            result.err()
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
