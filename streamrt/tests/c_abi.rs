//! The C ABI end to end: compiles `tests/c/wavefront.c` against `include/streamrt.h` and the
//! static library with the system `cc`, runs it on 1, 2, 4 and 8 threads and checks its result
//! against a Rust computation of the same recurrence.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// The newest modification time of the files under `dir`.
fn newest_source(dir: &Path) -> SystemTime {
    let mut newest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
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

/// Finds `libstreamrt.a` built from the current sources.
///
/// `cargo test` builds the library's staticlib next to the rlib the tests link, in
/// `<target>/<profile>/deps/libstreamrt-<hash>.a` (`cargo build` also copies it to
/// `<target>/<profile>/libstreamrt.a`); this test binary lives in that `deps` directory. The
/// newest candidate is used if it is newer than every source file; otherwise the library is
/// built with `cargo build -p streamrt` into a separate target directory (building into the
/// running `cargo test`'s own directory could wait forever for its lock).
fn staticlib() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    let deps = exe.parent().expect("test binary directory");
    let profile = deps.parent().expect("profile directory");
    let mut candidates = vec![profile.join("libstreamrt.a")];
    for entry in std::fs::read_dir(deps)
        .expect("read the deps directory")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("libstreamrt-") && name.ends_with(".a") {
            candidates.push(entry.path());
        }
    }
    let sources = newest_source(&Path::new(CRATE_DIR).join("src"));
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
    let status = Command::new(&cargo)
        .args(["build", "-p", "streamrt", "--manifest-path"])
        .arg(Path::new(CRATE_DIR).join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cargo} to build libstreamrt.a: {e}"));
    assert!(
        status.success(),
        "`cargo build -p streamrt` failed ({status}); cannot test the C ABI"
    );
    let lib = target.join("debug").join("libstreamrt.a");
    assert!(
        lib.is_file(),
        "`cargo build -p streamrt` did not produce {}",
        lib.display()
    );
    lib
}

/// Compiles `tests/c/<name>.c` against the header and the static library.
fn compile(name: &str, out_dir: &Path) -> PathBuf {
    let lib = staticlib();
    let exe = out_dir.join(name);
    let output = Command::new("cc")
        .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(Path::new(CRATE_DIR).join("include"))
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

/// What `wavefront N M` must print: the last cell and the sum of all cells, mod P.
fn expected_wavefront(n: usize, m: usize) -> String {
    const P: u64 = 1_000_003;
    let mut v = vec![0u64; n * m];
    for i in 0..n {
        for j in 0..m {
            let up = if i > 0 { v[(i - 1) * m + j] } else { 0 };
            let left = if j > 0 { v[i * m + j - 1] } else { 0 };
            v[i * m + j] = (up + left + 1) % P;
        }
    }
    let sum = v.iter().fold(0, |s, x| (s + x) % P);
    format!("ok {} {sum}\n", v[n * m - 1])
}

#[test]
fn c_wavefront_runs_in_dependence_order() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("wavefront", dir.path());
    for (n, m) in [(1, 1), (37, 53), (120, 90)] {
        let expected = expected_wavefront(n, m);
        for threads in ["1", "2", "4", "8"] {
            let output = Command::new(&exe)
                .args([n.to_string(), m.to_string()])
                .env("TILEDFLOW_NUM_THREADS", threads)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "wavefront {n}x{m} on {threads} threads failed ({}): {stdout}{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
            assert_eq!(stdout, expected, "wavefront {n}x{m} on {threads} threads");
        }
    }
}
