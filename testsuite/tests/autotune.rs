//! `--autotune`: each SCoP's fusion candidates timed in programs of their own, the winner kept
//! in the wisdom file. What is checked is what does not depend on the timings: every candidate's
//! harness compiles and runs (a SCoP reaching its variables in every way the IR knows), the
//! program built with the chosen schedules computes what `cc`'s does, the wisdom file gets one
//! line per SCoP, a later build recalls it and generates the same code, and a remembered choice
//! is the schedule built (a line edited by hand to another heuristic gives that heuristic's code).

mod common;

use common::{reference_cc, run, tool};
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    testsuite::paths::repo_root()
        .join("testsuite/data")
        .join(name)
}

/// The `-v` lines of the SCoPs.
fn scop_lines(said: &str) -> Vec<&str> {
    said.lines().filter(|l| l.contains(": SCoP in ")).collect()
}

/// Builds `src` with tiledflow-cc and `--tiledflow-autotune` into `dir/exe` with the wisdom file
/// `wisdom`, and returns what it said.
fn build_tuned(dir: &Path, src: &Path, wisdom: &Path, exe: &str) -> String {
    run(tool("tiledflow-cc")
        .env("TILEDFLOW_WISDOM", wisdom)
        .args([
            "--tiledflow-autotune",
            "--tiledflow-verbose",
            "--tiledflow-strict",
            "-O1",
        ])
        .arg(src)
        .arg("-o")
        .arg(dir.join(exe)))
    .expect(0)
    .said()
}

/// `tiledflow ARGS src -o dir/OUT` (with `TILEDFLOW_WISDOM=wisdom` when given), which must
/// succeed; returns what it said.
fn tiledflow_on<'a>(
    dir: &'a Path,
    src: &'a Path,
    wisdom: Option<&'a Path>,
) -> impl Fn(&[&str], &str) -> String + 'a {
    move |args, out| {
        let mut cmd = tool("tiledflow");
        if let Some(w) = wisdom {
            cmd.env("TILEDFLOW_WISDOM", w);
        }
        run(cmd.args(args).arg(src).arg("-o").arg(dir.join(out)))
            .expect(0)
            .said()
    }
}

fn output_of(exe: &Path) -> String {
    run(&mut std::process::Command::new(exe)).expect(0).stdout
}

#[test]
fn every_candidate_is_timed_and_the_tuned_program_computes_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let src = data("autotune/storage.c");
    let wisdom = dir.path().join("cache").join("wisdom");
    run(reference_cc()
        .args(["-O1", "-o"])
        .arg(dir.path().join("reference"))
        .arg(&src))
    .expect(0);
    let want = output_of(&dir.path().join("reference"));

    let said = build_tuned(dir.path(), &src, &wisdom, "tuned");
    let lines = scop_lines(&said);
    assert_eq!(lines.len(), 3, "{said}");
    for line in &lines {
        let timed = line
            .split("autotuned: ")
            .nth(1)
            .unwrap_or_else(|| panic!("not autotuned: {line}"));
        // Each candidate has a time (or was stopped for being slower): none failed to build or run.
        let timed = &timed[..timed.find(')').unwrap()];
        for candidate in timed.split(", ") {
            assert!(
                candidate.ends_with(" us")
                    || candidate.ends_with(" ms")
                    || candidate.ends_with(" s")
                    || candidate.contains("stopped"),
                "{candidate}\n{line}"
            );
        }
    }
    assert_eq!(output_of(&dir.path().join("tuned")), want);
    let kept = std::fs::read_to_string(&wisdom).unwrap();
    let entries: Vec<&str> = kept.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(entries.len(), 3, "{kept}");

    // A later build recalls every SCoP's choice and builds the same program.
    let again = build_tuned(dir.path(), &src, &wisdom, "recalled");
    for line in scop_lines(&again) {
        assert!(
            line.contains("autotuned by an earlier build (wisdom)"),
            "{line}"
        );
    }
    assert_eq!(output_of(&dir.path().join("recalled")), want);
    assert_eq!(std::fs::read_to_string(&wisdom).unwrap(), kept);
}

#[test]
fn a_remembered_choice_is_the_schedule_built() {
    let dir = tempfile::tempdir().unwrap();
    let src = data("autotune/storage.c");
    let wisdom = dir.path().join("wisdom");
    let tiledflow = tiledflow_on(dir.path(), &src, Some(&wisdom));
    let said = tiledflow(&["--autotune", "-v"], "tuned.c");
    assert!(said.contains("autotuned: "), "{said}");
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    // Every heuristic in turn, written into the wisdom file by hand for every SCoP: the output is
    // that heuristic's (storage.c has a different program under each: checked below).
    let kept = std::fs::read_to_string(&wisdom).unwrap();
    let keys: Vec<&str> = kept
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(keys.len(), 3, "one line per SCoP: {kept}");
    let mut outputs = Vec::new();
    for fuse in ["min", "smart", "max"] {
        let edited: String = keys
            .iter()
            .map(|k| format!("{k} {fuse} # edited\n"))
            .collect();
        std::fs::write(&wisdom, edited).unwrap();
        let said = tiledflow(&["--autotune", "-v"], "recalled.c");
        assert!(said.contains("autotuned by an earlier build"), "{said}");
        tiledflow(&["--fuse", fuse], "fixed.c");
        assert!(
            read("recalled.c") == read("fixed.c"),
            "--fuse {fuse} differs from the wisdom's {fuse}"
        );
        outputs.push(read("fixed.c"));
    }
    assert!(
        outputs[0] != outputs[1] && outputs[1] != outputs[2] && outputs[0] != outputs[2],
        "two heuristics agree: the test cannot tell them apart"
    );
}

#[test]
fn autotune_and_a_fixed_fusion_are_refused_together() {
    let dir = tempfile::tempdir().unwrap();
    let src = data("forms/contractions.c");
    let ran = run(tool("tiledflow")
        .args(["--autotune", "--fuse", "min"])
        .arg(&src)
        .arg("-o")
        .arg(dir.path().join("out.c")));
    let said = ran.expect(1).said();
    assert!(said.contains("cannot be combined with --fuse"), "{said}");
    assert!(!dir.path().join("out.c").exists());
}

#[test]
fn without_a_working_compiler_the_models_choice_stands() {
    let dir = tempfile::tempdir().unwrap();
    let src = data("autotune/storage.c");
    let wisdom = dir.path().join("wisdom");
    let build = tiledflow_on(dir.path(), &src, None);
    let said = build(
        &[
            "--autotune",
            "--autotune-cc",
            "false",
            "--wisdom",
            wisdom.to_str().unwrap(),
        ],
        "tuned.c",
    );
    assert_eq!(
        said.matches(
            "note: --autotune: the cost model's choice stands: no candidate could be timed"
        )
        .count(),
        3,
        "{said}"
    );
    assert!(said.contains("the harness did not compile"), "{said}");
    assert!(!wisdom.exists(), "nothing measured, nothing kept");
    build(&[], "model.c");
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert!(
        read("tuned.c") == read("model.c"),
        "not the cost model's choice"
    );
}
