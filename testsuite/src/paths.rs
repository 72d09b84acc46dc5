//! Where things are: the repository, the PolyBench kernels and utilities, and the directory of
//! the built `tiledflow` / `tiledflow-cc` binaries and `libstreamrt.a`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The binary every differential run needs; its presence is what identifies a build directory.
const DRIVER: &str = "tiledflow-cc";

/// The repository root (the workspace directory holding `testsuite/`).
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// `<repo>/polybench/kernels`.
pub fn kernels_dir() -> PathBuf {
    repo_root().join("polybench").join("kernels")
}

/// `<repo>/polybench/utilities`, the directory holding `polybench.h` (pass it as `-I`).
pub fn utilities_dir() -> PathBuf {
    repo_root().join("polybench").join("utilities")
}

/// The directory of one kernel, `<repo>/polybench/kernels/<name>`.
pub fn kernel_dir(name: &str) -> PathBuf {
    kernels_dir().join(name)
}

/// The C source of one kernel, `<repo>/polybench/kernels/<name>/<name>.c` (not checked).
pub fn kernel_path(name: &str) -> PathBuf {
    kernel_dir(name).join(format!("{name}.c"))
}

/// Names of all kernels: the directories of `polybench/kernels` that hold `<name>/<name>.c`,
/// sorted.
pub fn kernel_names() -> Result<Vec<String>> {
    let dir = kernels_dir();
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if kernel_path(&name).is_file() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// The C compiler used for reference builds: `$TILEDFLOW_REFERENCE_CC` if set, else `cc`.
///
/// `$CC` is deliberately not read: users set `CC=tiledflow-cc`, and the reference must never be
/// built by the compiler under test.
pub fn reference_cc() -> OsString {
    std::env::var_os("TILEDFLOW_REFERENCE_CC")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| OsString::from("cc"))
}

/// What [`resolve_bin_dir`] looks at; separated from the process environment so the search order
/// can be tested.
#[derive(Debug, Default, Clone)]
pub(crate) struct BinDirInputs {
    /// `$TILEDFLOW_BIN_DIR` at run time.
    pub explicit: Option<PathBuf>,
    /// The profile directory of the running test executable (`target/debug` for
    /// `target/debug/deps/harness-*`).
    pub exe_profile_dir: Option<PathBuf>,
    /// `$CARGO_TARGET_DIR` at run time, then at compile time.
    pub target_dirs: Vec<PathBuf>,
    /// The repository root.
    pub repo: PathBuf,
}

impl BinDirInputs {
    fn from_environment() -> Self {
        let repo = repo_root();
        let absolute = |p: PathBuf| if p.is_absolute() { p } else { repo.join(p) };
        let mut target_dirs = Vec::new();
        if let Some(d) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
            target_dirs.push(absolute(PathBuf::from(d)));
        }
        if let Some(d) = option_env!("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
            target_dirs.push(absolute(PathBuf::from(d)));
        }
        // Test executables live in `<target>/<profile>/deps/`.
        let exe_profile_dir = std::env::current_exe().ok().and_then(|exe| {
            let deps = exe.parent()?;
            if deps.file_name()? == "deps" {
                deps.parent().map(Path::to_path_buf)
            } else {
                Some(deps.to_path_buf())
            }
        });
        BinDirInputs {
            explicit: std::env::var_os("TILEDFLOW_BIN_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            exe_profile_dir,
            target_dirs,
            repo,
        }
    }
}

/// Picks the build directory: `explicit` if given (it must hold the driver), else the first of
/// the test executable's profile directory, `<target dir>/debug` for each target dir, and
/// `<repo>/target/debug` that holds `tiledflow-cc`.
pub(crate) fn resolve_bin_dir(inputs: &BinDirInputs) -> Result<PathBuf> {
    if let Some(dir) = &inputs.explicit {
        if dir.join(DRIVER).is_file() {
            return Ok(dir.clone());
        }
        bail!(
            "TILEDFLOW_BIN_DIR={} does not contain `{DRIVER}`; run `cargo build --workspace` first \
             (or point TILEDFLOW_BIN_DIR at the directory holding the built binaries)",
            dir.display()
        );
    }
    let mut candidates: Vec<PathBuf> = inputs.exe_profile_dir.iter().cloned().collect();
    candidates.extend(inputs.target_dirs.iter().map(|t| t.join("debug")));
    candidates.push(inputs.repo.join("target").join("debug"));
    if let Some(found) = candidates.iter().find(|d| d.join(DRIVER).is_file()) {
        return Ok(found.clone());
    }
    let looked: Vec<String> = candidates.iter().map(|d| d.display().to_string()).collect();
    bail!(
        "cannot find the built `{DRIVER}` (looked in {}); run `cargo build --workspace` first, \
         with the same CARGO_TARGET_DIR, or set TILEDFLOW_BIN_DIR",
        looked.join(", ")
    )
}

/// The directory holding the built `tiledflow`, `tiledflow-cc` and `libstreamrt.a`:
/// `$TILEDFLOW_BIN_DIR` if set, else the build directory of the running tests, else
/// `$CARGO_TARGET_DIR/debug` (run time, then compile time), else `<repo>/target/debug` — the
/// first of these that contains `tiledflow-cc`.
pub fn bin_dir() -> Result<PathBuf> {
    resolve_bin_dir(&BinDirInputs::from_environment())
}

/// A built tool, e.g. `tool_path("tiledflow-cc")`; fails with a clear message if it is missing.
pub fn tool_path(name: &str) -> Result<PathBuf> {
    let dir = bin_dir()?;
    let path = dir.join(name);
    if path.is_file() {
        Ok(path)
    } else {
        bail!(
            "{} does not exist; run `cargo build --workspace` first",
            path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch_driver(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(DRIVER), b"").unwrap();
    }

    #[test]
    fn explicit_directory_wins_and_must_hold_the_driver() {
        let tmp = tempfile::tempdir().unwrap();
        let explicit = tmp.path().join("explicit");
        let exe = tmp.path().join("exe");
        touch_driver(&exe);
        let mut inputs = BinDirInputs {
            explicit: Some(explicit.clone()),
            exe_profile_dir: Some(exe),
            target_dirs: vec![],
            repo: tmp.path().join("repo"),
        };
        let err = resolve_bin_dir(&inputs).unwrap_err().to_string();
        assert!(err.contains("TILEDFLOW_BIN_DIR"), "{err}");
        assert!(err.contains("cargo build --workspace"), "{err}");
        touch_driver(&explicit);
        inputs.explicit = Some(explicit.clone());
        assert_eq!(resolve_bin_dir(&inputs).unwrap(), explicit);
    }

    #[test]
    fn search_order_is_exe_then_target_dirs_then_repo() {
        let tmp = tempfile::tempdir().unwrap();
        let exe = tmp.path().join("exe");
        let target = tmp.path().join("tgt");
        let repo = tmp.path().join("repo");
        let inputs = BinDirInputs {
            explicit: None,
            exe_profile_dir: Some(exe.clone()),
            target_dirs: vec![target.clone()],
            repo: repo.clone(),
        };
        let err = resolve_bin_dir(&inputs).unwrap_err().to_string();
        assert!(err.contains("run `cargo build --workspace` first"), "{err}");
        assert!(
            err.contains(&repo.join("target").join("debug").display().to_string()),
            "{err}"
        );
        touch_driver(&repo.join("target").join("debug"));
        assert_eq!(
            resolve_bin_dir(&inputs).unwrap(),
            repo.join("target").join("debug")
        );
        touch_driver(&target.join("debug"));
        assert_eq!(resolve_bin_dir(&inputs).unwrap(), target.join("debug"));
        touch_driver(&exe);
        assert_eq!(resolve_bin_dir(&inputs).unwrap(), exe);
    }
}
