//! A C project as users have them (`testsuite/data/projects/stencils`: two sources with a SCoP
//! each, a main, a header found through `-I` and one found next to its source), built with
//! tiledflow-cc as CC by make (`make -j`, several tiledflow-cc at once), by CMake, and with an
//! installed tiledflow (`make install PREFIX=...`), and for the cuda target with its emulated
//! kernels (`make`, and one command). Each build is run and its output compared
//! with the program `cc` builds; `taskcount.c`, linked with `-Wl,--wrap=tf_task_begin`, counts
//! the tasks the program really spawns on streamrt.

mod common;

use common::{copy_dir, files_under, project_dir, reference_cc, run, tool, Ran};
use std::path::Path;
use std::process::Command;

/// Held by each test: `make install` runs `cargo build`, which must not relink the tools while
/// another test of this file runs them.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

const SOURCES: [&str; 3] = ["src/main.c", "src/blur.c", "src/smooth.c"];

/// Program arguments (n, m, tsteps) of the runs compared: the default sizes and others.
const RUNS: [&[&str]; 2] = [&[], &["20", "33", "5"]];

/// The outputs of the stencils program built by `cc` straight from the sources.
fn reference_outputs(dir: &Path) -> Vec<String> {
    let ref_dir = dir.join("reference");
    copy_dir(&project_dir("stencils"), &ref_dir);
    let mut cc = reference_cc();
    cc.current_dir(&ref_dir)
        .args(["-O2", "-ffp-contract=off", "-Iinclude"])
        .args(SOURCES)
        .args(["-o", "ref"]);
    run(&mut cc).expect(0);
    RUNS.iter()
        .map(|args| {
            run(Command::new(ref_dir.join("ref")).args(*args))
                .expect(0)
                .stdout
        })
        .collect()
}

/// Runs `exe` with each of [`RUNS`], checks its output against `reference`, and returns the task
/// count `taskcount.c` reports for the first run.
fn check_program(exe: &Path, reference: &[String]) -> u64 {
    check_program_in(exe, reference, &[]).0
}

/// [`check_program`] with `env` set; also returns the first run's stderr.
fn check_program_in(exe: &Path, reference: &[String], env: &[(&str, &str)]) -> (u64, String) {
    let mut first = None;
    for (args, expected) in RUNS.iter().zip(reference) {
        let r = run(Command::new(exe).args(*args).envs(env.iter().copied())).expect(0);
        assert!(
            r.stdout == *expected,
            "{} {args:?}: the output differs from cc's build",
            exe.display()
        );
        let count = r
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("tiledflow tasks spawned: "))
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no task count from {}\n{}", exe.display(), r.said()));
        first.get_or_insert((count, r.stderr));
    }
    first.unwrap()
}

/// A `make` for a nested build: the outer make's job server and flags stay outside.
fn make(dir: &Path) -> Command {
    let mut cmd = Command::new("make");
    cmd.current_dir(dir);
    for var in [
        "MAKEFLAGS",
        "MFLAGS",
        "MAKELEVEL",
        "TILEDFLOW_CC",
        "TILEDFLOW_STRICT",
        "TILEDFLOW_RUNTIME",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn tiledflow_cc_path() -> String {
    testsuite::tool_path("tiledflow-cc")
        .expect("the workspace is built")
        .display()
        .to_string()
}

#[test]
fn make_j_builds_the_project_with_tiledflow_cc_as_cc() {
    let _serial = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let reference = reference_outputs(tmp.path());
    let dir = tmp.path().join("make");
    copy_dir(&project_dir("stencils"), &dir);
    let before = files_under(&dir);
    let cc = format!("CC={}", tiledflow_cc_path());
    let extra = [
        "EXTRA_SRCS=taskcount.c",
        "LDFLAGS=-Wl,--wrap=tf_task_begin",
        "CFLAGS=-O2 -Wall --tiledflow-verbose",
    ];
    // -j4: the sources are compiled by several tiledflow-cc at once, in one directory.
    let r = run(make(&dir).args(["-j4", &cc]).args(extra)).expect(0);
    assert!(
        r.stderr.contains("src/blur.c: SCoP in blur()"),
        "{}",
        r.said()
    );
    assert!(
        r.stderr.contains("src/smooth.c: SCoP in smooth()"),
        "{}",
        r.said()
    );
    assert!(
        !r.stderr.contains("warning"),
        "-Wall found something:\n{}",
        r.said()
    );
    // Nothing but the outputs make asked for.
    let mut expected = before.clone();
    for stem in ["src/main", "src/blur", "src/smooth", "taskcount"] {
        expected.extend([format!("{stem}.d"), format!("{stem}.o")]);
    }
    expected.push("prog".into());
    expected.sort();
    assert_eq!(files_under(&dir), expected);
    // Dependency files name the user's sources and headers, so make rebuilds what it must.
    let deps = std::fs::read_to_string(dir.join("src/blur.d")).unwrap();
    assert!(
        deps.starts_with("src/blur.o: src/blur.c include/kernels.h"),
        "{deps}"
    );
    assert!(
        deps.contains("src/weights.h") && !deps.contains("tiledflow-cc."),
        "{deps}"
    );
    run(make(&dir).args(["-q", &cc]).args(extra)).expect(0);
    let header = std::fs::File::options()
        .write(true)
        .open(dir.join("src/weights.h"))
        .unwrap();
    header
        .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    run(make(&dir).args(["-q", &cc]).args(extra)).expect(1);

    let n_tasks = check_program(&dir.join("prog"), &reference);
    // blur: 37 x 45 points in 32 x 32 tiles, at least 2 x 2 tasks; smooth adds its own.
    assert!(n_tasks > 4, "only {n_tasks} tasks spawned");
}

/// The notice of a cuda-target program that runs its CPU task version.
const FALLBACK: &str = "running the CPU task version";

/// `--tiledflow-target=cuda`, by make (`-c` per source, then a link of the objects) and by one
/// command that compiles and links: each source's emulated kernels go into its object (or the
/// link), the two sources' kernels link together, and with `TILEDFLOW_GPU=emulate` every SCoP
/// runs on the emulated device (no fallback notice, no CPU task spawned) and prints what cc's
/// build prints; with `TILEDFLOW_GPU=off` the same program runs its CPU tasks.
#[test]
fn the_cuda_target_links_its_emulated_kernels_with_make_and_in_one_command() {
    let _serial = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let reference = reference_outputs(tmp.path());
    let dir = tmp.path().join("make-cuda");
    copy_dir(&project_dir("stencils"), &dir);
    let cc = format!("CC={} --tiledflow-target=cuda", tiledflow_cc_path());
    let extra = ["EXTRA_SRCS=taskcount.c", "LDFLAGS=-Wl,--wrap=tf_task_begin"];
    let r = run(make(&dir).args(["-j2", &cc]).args(extra)).expect(0);
    assert!(!r.stderr.contains("warning"), "{}", r.said());
    let emulate = [("TILEDFLOW_GPU", "emulate")];
    let (n_tasks, stderr) = check_program_in(&dir.join("prog"), &reference, &emulate);
    assert!(
        !stderr.contains(FALLBACK),
        "the GPU path did not run:\n{stderr}"
    );
    assert_eq!(
        n_tasks, 0,
        "CPU tasks spawned although every SCoP is on the GPU"
    );
    let (n_tasks, stderr) =
        check_program_in(&dir.join("prog"), &reference, &[("TILEDFLOW_GPU", "off")]);
    assert_eq!(stderr.matches(FALLBACK).count(), 1, "{stderr}");
    // The cuda target's tiles are large (256): one task per SCoP at the default sizes.
    assert!(n_tasks >= 2, "only {n_tasks} tasks spawned");

    let mut cc = Command::new(tiledflow_cc_path());
    cc.current_dir(&dir)
        .args([
            "--tiledflow-target=cuda",
            "-O2",
            "-ffp-contract=off",
            "-Iinclude",
            "-Wl,--wrap=tf_task_begin",
            "taskcount.c",
        ])
        .args(SOURCES)
        .args(["-o", "prog1"]);
    run(&mut cc).expect(0);
    let (n_tasks, stderr) = check_program_in(&dir.join("prog1"), &reference, &emulate);
    assert!(
        !stderr.contains(FALLBACK) && n_tasks == 0,
        "the GPU path did not run ({n_tasks} CPU tasks):\n{stderr}"
    );
}

/// Whether cmake can be run; when it is missing, `scripts/deps.sh` installs it (as `make test`
/// does first). Prints why when it cannot.
fn cmake_available() -> bool {
    let works = || {
        Command::new("cmake")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works() {
        return true;
    }
    let deps = run(Command::new("bash").arg(testsuite::repo_root().join("scripts/deps.sh")));
    if works() {
        return true;
    }
    eprintln!(
        "NOTE: the CMake project test is SKIPPED: cmake is not installed and scripts/deps.sh could not install it:\n{}",
        deps.said()
    );
    false
}

#[test]
fn cmake_builds_the_project_with_tiledflow_cc_as_cc() {
    let _serial = one_at_a_time();
    if !cmake_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let reference = reference_outputs(tmp.path());
    let src = tmp.path().join("cmake-src");
    copy_dir(&project_dir("stencils"), &src);
    let build = tmp.path().join("cmake-build");
    let configure = |cmd: &mut Command| -> Ran {
        cmd.env("CC", tiledflow_cc_path())
            .env_remove("MAKEFLAGS")
            .env_remove("MAKELEVEL")
            .env_remove("CFLAGS");
        run(cmd)
    };
    let mut cmake = Command::new("cmake");
    cmake
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .args(["-DTASKCOUNT=ON", "-DCMAKE_BUILD_TYPE=Release"]);
    configure(&mut cmake).expect(0);
    let mut cmake = Command::new("cmake");
    cmake.arg("--build").arg(&build).args(["-j", "3"]);
    configure(&mut cmake).expect(0);
    let n_tasks = check_program(&build.join("prog"), &reference);
    assert!(n_tasks > 4, "only {n_tasks} tasks spawned");
    // The source tree is untouched; CMake's dependency files name the user's sources.
    assert_eq!(files_under(&src), files_under(&project_dir("stencils")));
    let deps = std::fs::read_to_string(build.join("CMakeFiles/prog.dir/src/blur.c.o.d")).unwrap();
    assert!(
        deps.contains(&format!("{}", src.join("src/blur.c").display())),
        "{deps}"
    );
    assert!(
        deps.contains("weights.h") && !deps.contains("tiledflow-cc."),
        "{deps}"
    );
}

#[test]
fn make_install_gives_a_tiledflow_cc_that_finds_its_runtime() {
    let _serial = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("prefix");
    let prefix_arg = format!("PREFIX={}", prefix.display());
    // The debug build the tests use: installing it builds nothing new.
    let r =
        run(make(&testsuite::repo_root()).args(["install", &prefix_arg, "INSTALL_PROFILE=dev"]));
    r.expect(0);
    assert_eq!(
        files_under(&prefix),
        vec![
            "bin/tiledflow",
            "bin/tiledflow-cc",
            "include/streamrt.h",
            "lib/libstreamrt.a",
            "lib/libstreamrt_gpu.a"
        ]
    );
    run(Command::new(prefix.join("bin/tiledflow")).arg("--version")).expect(0);
    // The installed driver, far from the build tree, builds and links the project.
    let reference = reference_outputs(tmp.path());
    let dir = tmp.path().join("project");
    copy_dir(&project_dir("stencils"), &dir);
    let mut cc = Command::new(prefix.join("bin/tiledflow-cc"));
    for var in ["TILEDFLOW_CC", "TILEDFLOW_STRICT", "TILEDFLOW_RUNTIME"] {
        cc.env_remove(var);
    }
    cc.current_dir(&dir)
        .args([
            "-O2",
            "-ffp-contract=off",
            "-Iinclude",
            "--tiledflow-verbose",
            "-Wl,--wrap=tf_task_begin",
            "taskcount.c",
        ])
        .args(SOURCES)
        .args(["-o", "prog"]);
    let r = run(&mut cc).expect(0);
    assert_eq!(r.stderr.matches(": SCoP in ").count(), 2, "{}", r.said());
    assert!(check_program(&dir.join("prog"), &reference) > 4);
    // The installed header and library are all a C program needs to use the runtime directly.
    let c = "#include <streamrt.h>\nint main(void) { tf_graph *g = tf_graph_begin(); tf_graph_end(g); return 0; }\n";
    common::write(&dir, "direct.c", c);
    let mut cc = reference_cc();
    cc.current_dir(&dir)
        .arg(format!("-I{}", prefix.join("include").display()))
        .args(["direct.c", "-o", "direct"])
        .arg(prefix.join("lib/libstreamrt.a"))
        .args(["-lpthread", "-ldl", "-lm"]);
    run(&mut cc).expect(0);
    run(&mut Command::new(dir.join("direct"))).expect(0);
    // The build tree's driver is unaffected.
    run(tool("tiledflow-cc").arg("--version")).expect(0);
}
