//! Finding the including crate's static library (`libstreamrt.a`, or `libstreamrt_gpu.a` of
//! `streamrt-gpu`, which holds streamrt too) built from the current sources, for the tests and the
//! benchmark that link C programs against it (included with `#[path]` by `tests/c_abi.rs`,
//! `benches/runtime.rs` and `streamrt-gpu/tests/gpu.rs`), and compiling the C test programs of
//! the crate's `tests/c`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// The including crate's directory (`streamrt` or `streamrt-gpu`).
pub const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// The including crate's package name.
fn package() -> String {
    Path::new(CRATE_DIR)
        .file_name()
        .expect("crate directory name")
        .to_string_lossy()
        .into_owned()
}

/// The directory of the streamrt crate (its sources and `include/streamrt.h`).
fn streamrt_dir() -> PathBuf {
    Path::new(CRATE_DIR).join("../streamrt")
}

/// The newest modification time of the files under `dir`.
fn newest_source(dir: &Path) -> SystemTime {
    let mut newest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        // Compiled only into the loom model test: a change there does not rebuild the library.
        if path.file_name().is_some_and(|n| n == "loom_model.rs") {
            continue;
        }
        let time = if path.is_dir() {
            newest_source(&path)
        } else {
            mtime(&path)
        };
        newest = newest.max(time);
    }
    newest
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Finds the crate's static library built from the current sources.
///
/// `cargo test` builds the library's staticlib next to the rlib the tests link, in
/// `<target>/<profile>/deps/libstreamrt-<hash>.a` (`cargo build` also copies it to
/// `<target>/<profile>/libstreamrt.a`; `libstreamrt_gpu` likewise); this test binary lives in that
/// `deps` directory. The newest candidate is used if it is newer than every source file (of
/// streamrt, and of the GPU path for its library); otherwise the library is built with `cargo
/// build -p <crate>` (`--release` when the caller is a release binary, such as the benchmark)
/// into a separate target directory (building into the running cargo's own directory could wait
/// forever for its lock).
pub fn staticlib() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    let deps = exe.parent().expect("test binary directory");
    let profile = deps.parent().expect("profile directory");
    let package = package();
    let stem = format!("lib{}", package.replace('-', "_"));
    let file = format!("{stem}.a");
    let mut candidates = vec![profile.join(&file)];
    for entry in std::fs::read_dir(deps)
        .expect("read the deps directory")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&format!("{stem}-")) && name.ends_with(".a") {
            candidates.push(entry.path());
        }
    }
    let sources = newest_source(&Path::new(CRATE_DIR).join("src"))
        .max(newest_source(&streamrt_dir().join("src")));
    let newest = candidates
        .into_iter()
        .filter(|p| p.is_file())
        .max_by_key(|p| mtime(p));
    if let Some(lib) = newest.filter(|p| mtime(p) >= sources) {
        return lib;
    }

    let target = profile
        .parent()
        .expect("target directory")
        .join("streamrt-c-test");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let release = profile.file_name().is_some_and(|n| n == "release");
    let status = Command::new(&cargo)
        .args(["build", "-p", &package, "--manifest-path"])
        .arg(Path::new(CRATE_DIR).join("Cargo.toml"))
        .args(release.then_some("--release"))
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cargo} to build {file}: {e}"));
    assert!(
        status.success(),
        "`cargo build -p {package}` failed ({status}); cannot link C programs"
    );
    let lib = target
        .join(if release { "release" } else { "debug" })
        .join(&file);
    assert!(
        lib.is_file(),
        "`cargo build -p {package}` did not produce {}",
        lib.display()
    );
    lib
}

/// Compiles `tests/c/<name>.c` against the header and the static library with the system `cc`
/// (the link flags a C program needs: `-lpthread -ldl -lm`).
#[allow(dead_code)] // not used by the benchmark
pub fn compile_test_program(name: &str, out_dir: &Path) -> PathBuf {
    let lib = staticlib();
    let exe = out_dir.join(name);
    let output = Command::new("cc")
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(streamrt_dir().join("include"))
        .arg(
            Path::new(CRATE_DIR)
                .join("tests/c")
                .join(format!("{name}.c")),
        )
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
        .expect("cannot run the C compiler `cc`");
    assert!(
        output.status.success(),
        "cc failed on {name}.c with {}:\n{}",
        lib.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    exe
}
