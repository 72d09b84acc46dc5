//! Tidiness of the workspace's own code that the compiler does not check: every Rust module
//! starts with a header comment (`//!`) that says what it is for.

use std::path::{Path, PathBuf};

/// Whether `text` (a Rust source file) starts, past blank lines, with an inner doc comment.
fn has_header(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim_start().starts_with("//!"))
}

/// Every `.rs` file below `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_header_check_can_tell() {
    assert!(has_header("\n//! What this is for.\nfn f() {}\n"));
    assert!(!has_header("// A plain comment.\nfn f() {}\n"));
    assert!(!has_header("fn main() {}\n"));
    assert!(!has_header(""));
}

/// The `src` trees of the workspace's crates (the root package and each member).
#[test]
fn every_module_has_a_header_comment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    let mut crates = vec![root.join("src")];
    for entry in std::fs::read_dir(&root)
        .expect("the workspace root is readable")
        .flatten()
    {
        let src = entry.path().join("src");
        if entry.path().join("Cargo.toml").is_file() && src.is_dir() {
            crates.push(src);
        }
    }
    for src in &crates {
        rust_files(src, &mut files);
    }
    assert!(
        files.len() > 50,
        "expected the workspace's modules, found {}",
        files.len()
    );
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !has_header(&std::fs::read_to_string(f).unwrap_or_default()))
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a `//!` header comment:\n{}",
        missing.join("\n")
    );
}
