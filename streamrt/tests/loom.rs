//! Runs the loom model test of the dependence protocol (`src/task/loom_model.rs`) as part of
//! `cargo test`: it needs the crate built with `--cfg loom`, so this test runs
//! `RUSTFLAGS="--cfg loom" cargo test -p streamrt --lib --release loom` in a separate target
//! directory (`<target>/loom`; building into the running cargo's own directory would wait for
//! its lock) and checks that both model tests ran and passed.

use std::path::Path;
use std::process::Command;

#[test]
fn loom_model_of_the_dependence_protocol() {
    let exe = std::env::current_exe().expect("path of the test binary");
    let target = exe
        .ancestors()
        .nth(3)
        .expect("the target directory above <profile>/deps/")
        .join("loom");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(&cargo)
        .args([
            "test",
            "-p",
            "streamrt",
            "--lib",
            "--release",
            "--manifest-path",
        ])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .args(["loom", "--", "--test-threads=1"])
        .env("RUSTFLAGS", "--cfg loom")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cargo}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the loom model test failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    for name in [
        "loom_a_task_waits_for_two_producers_registered_concurrently",
        "loom_a_counted_barrier_and_its_reader",
        "loom_a_task_ready_at_spawn_runs_inline_uncounted",
    ] {
        assert!(
            stdout.contains(&format!("task::loom_model::{name} ... ok")),
            "{name} did not run:\n{stdout}"
        );
    }
}
