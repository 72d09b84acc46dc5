//! Tidiness of the workspace's own code that the compiler does not check: every Rust module
//! starts with a header comment (`//!`) that says what it is for, and every dependency a crate
//! declares is used by its code; no compiled program or object is tracked by git.

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

/// Dependencies that no code names but that a crate needs all the same, with why.
const USED_WITHOUT_A_NAME: &[(&str, &str, &str)] = &[(
    "polyhedral",
    "isl-rs",
    "builds and links the ISL library; polyhedral declares the C functions it calls itself",
)];

/// Whether `code` names the crate `name` (its Rust name: `-` as `_`) as a path or in a `use`.
fn names_crate(code: &str, name: &str) -> bool {
    let name = name.replace('-', "_");
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(&name).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = &code[at + name.len()..];
        !before.is_some_and(is_word)
            && (after.starts_with("::") || after.starts_with(';') || after.starts_with(" as "))
    })
}

#[test]
fn the_dependency_check_can_tell() {
    assert!(names_crate("use serde_json::Value;", "serde_json"));
    assert!(names_crate(
        "let x = crossbeam_deque::Worker::new_fifo();",
        "crossbeam-deque"
    ));
    assert!(names_crate("extern crate libc;", "libc"));
    assert!(!names_crate(
        "let serde_json_text = 1; // serde_json",
        "serde_json"
    ));
    assert!(!names_crate("use my_libc::x;", "libc"));
}

/// Every dependency of every crate of the workspace (normal, dev and build) is named by the
/// code that can use it: the crate's `src` for normal ones, also its tests, benches, examples
/// and build script for dev and build ones.
#[test]
fn every_declared_dependency_is_used() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crate_dirs = vec![root.clone()];
    for entry in std::fs::read_dir(&root)
        .expect("the workspace root is readable")
        .flatten()
    {
        if entry.path().join("Cargo.toml").is_file() {
            crate_dirs.push(entry.path());
        }
    }
    let mut unused = Vec::new();
    let mut checked = 0;
    for dir in &crate_dirs {
        let manifest: toml::Table = std::fs::read_to_string(dir.join("Cargo.toml"))
            .expect("a readable Cargo.toml")
            .parse()
            .expect("a valid Cargo.toml");
        let package = manifest
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
            .unwrap_or("?")
            .to_string();
        let code_in = |subdirs: &[&str]| -> String {
            let mut files = Vec::new();
            for sub in subdirs {
                let path = dir.join(sub);
                if path.is_file() {
                    files.push(path);
                } else {
                    rust_files(&path, &mut files);
                }
            }
            files
                .iter()
                .map(|f| std::fs::read_to_string(f).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let src = code_in(&["src"]);
        let all = code_in(&["src", "tests", "benches", "examples", "build.rs"]);
        for (section, code) in [
            ("dependencies", &src),
            ("dev-dependencies", &all),
            ("build-dependencies", &all),
        ] {
            let Some(deps) = manifest.get(section).and_then(|d| d.as_table()) else {
                continue;
            };
            for name in deps.keys() {
                checked += 1;
                let excused = USED_WITHOUT_A_NAME
                    .iter()
                    .any(|(p, d, _)| *p == package && d == name);
                if !excused && !names_crate(code, name) {
                    unused.push(format!("{package}: [{section}] {name}"));
                }
            }
        }
    }
    assert!(
        checked > 20,
        "expected the workspace's dependencies, found {checked}"
    );
    assert!(
        unused.is_empty(),
        "dependencies that no code of their crate names (remove them, or list them in USED_WITHOUT_A_NAME with why):\n{}",
        unused.join("\n")
    );
}

/// Whether `head` (the first bytes of a file) starts like build output: an ELF program or
/// object, an `ar` archive (static library), or a Mach-O or PE executable.
fn is_build_output(head: &[u8]) -> bool {
    const MAGICS: [&[u8]; 5] = [
        b"\x7fELF",
        b"!<arch>\n",
        b"\xcf\xfa\xed\xfe",
        b"\xce\xfa\xed\xfe",
        b"MZ\x90\x00",
    ];
    MAGICS.iter().any(|m| head.starts_with(m))
}

#[test]
fn the_build_output_check_can_tell() {
    assert!(is_build_output(b"\x7fELF\x02\x01\x01\0rest"));
    assert!(is_build_output(b"!<arch>\n/               0"));
    assert!(!is_build_output(b"#include <stdio.h>\n"));
    assert!(!is_build_output(b"\x7fEL"));
    assert!(!is_build_output(b""));
}

/// Generated build output never lands: no file that git tracks is a compiled program, object or
/// library (a test binary was once committed by mistake). Skipped, with a note, outside a git
/// checkout (a source archive).
#[test]
fn no_tracked_file_is_build_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if !root.join(".git").exists() {
        eprintln!("not a git checkout: the tracked files cannot be listed, check skipped");
        return;
    }
    let listed = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .expect("git runs in a git checkout");
    assert!(listed.status.success(), "git ls-files failed");
    let names: Vec<&[u8]> = listed
        .stdout
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .collect();
    assert!(
        names.len() > 100,
        "expected the repository's files, git listed {}",
        names.len()
    );
    let mut found = Vec::new();
    for name in names {
        let path = root.join(String::from_utf8_lossy(name).as_ref());
        let mut head = [0u8; 8];
        let Ok(mut file) = std::fs::File::open(&path) else {
            continue; // tracked but deleted in the working tree
        };
        use std::io::Read;
        let n = file.read(&mut head).unwrap_or(0);
        if is_build_output(&head[..n]) {
            found.push(path.display().to_string());
        }
    }
    assert!(
        found.is_empty(),
        "build output tracked by git (git rm it): {found:?}"
    );
}
