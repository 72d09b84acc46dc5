//! Helpers of the driver tests (`cli.rs`, `projects.rs`): run a command as a user would and keep
//! everything it said, so that a failed assertion shows it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What a finished command said.
pub struct Ran {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub shown: String,
}

impl Ran {
    /// Panics with everything the command said unless it exited with `code`.
    pub fn expect(self, code: i32) -> Ran {
        assert_eq!(
            self.status,
            Some(code),
            "`{}` exited with {:?}, expected {code}\n{}",
            self.shown,
            self.status,
            self.said()
        );
        self
    }

    /// Both outputs, for assertion messages.
    pub fn said(&self) -> String {
        format!(
            "--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` with `stdin` as its standard input (closed when `None`).
pub fn run_with_input(cmd: &mut Command, stdin: Option<&str>) -> Ran {
    let shown = format!("{cmd:?}");
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `{shown}`: {e}"));
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        // A command that refuses its input may exit before reading it: its status and messages
        // say so, a broken pipe here does not.
        if let Err(e) = pipe.write_all(text.as_bytes()) {
            assert!(
                e.kind() == std::io::ErrorKind::BrokenPipe,
                "writing to `{shown}`: {e}"
            );
        }
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("`{shown}`: {e}"));
    Ran {
        status: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        shown,
    }
}

/// Runs `cmd` with standard input closed.
pub fn run(cmd: &mut Command) -> Ran {
    run_with_input(cmd, None)
}

/// A built tool of this workspace (`tiledflow`, `tiledflow-cc`), with no tiledflow variable of
/// the caller's environment in its way.
pub fn tool(name: &str) -> Command {
    let path =
        testsuite::tool_path(name).expect("the workspace is built (cargo build --workspace)");
    let mut cmd = Command::new(path);
    for var in [
        "TILEDFLOW_CC",
        "TILEDFLOW_STRICT",
        "TILEDFLOW_RUNTIME",
        "TILEDFLOW_CC_NESTED",
        "TILEDFLOW_AUTOTUNE",
        "TILEDFLOW_WISDOM",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// The reference C compiler (never tiledflow-cc).
pub fn reference_cc() -> Command {
    Command::new(testsuite::reference_cc())
}

/// Every file under `dir`, relative to it, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Copies the directory `from` into `to` (created).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in files_under(from) {
        let dst = to.join(&f);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&f), &dst).unwrap_or_else(|e| panic!("copying {f}: {e}"));
    }
}

/// `testsuite/data/projects/<name>`.
pub fn project_dir(name: &str) -> PathBuf {
    testsuite::repo_root()
        .join("testsuite")
        .join("data")
        .join("projects")
        .join(name)
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}
