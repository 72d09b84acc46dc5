//! `make bench-runtime`: streamrt against OpenMP tasks with `depend` clauses, side by side.
//!
//! Compiles `benches/c/dag_bench.c` once per runtime (streamrt through its C ABI; gcc's libgomp
//! with `gcc -fopenmp`; LLVM's libomp with `clang -fopenmp` when clang and libomp are installed),
//! then runs the three DAGs of that program (a 1000 x 1000 wavefront of empty tasks, a
//! fan-out/fan-in broadcast, independent tasks) on every runtime in alternating order, several
//! rounds, each process timing its best of a few repetitions after a warm-up. It prints the
//! median over rounds as time, per-task overhead (wall time / tasks) and throughput, and for
//! each DAG a line `DAG: streamrt/libgomp throughput ratio = X.XX`.
//!
//! Threads: `TILEDFLOW_NUM_THREADS` if set, else every core; OpenMP gets the same count.
//! `BENCH_ROUNDS` (default 3) and `BENCH_REPS` (default 3) set the rounds and repetitions.
//! Timings are noisy on a shared machine: compare ratios taken in one run, not across runs.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../tests/support/staticlib.rs"]
mod support;
use support::{staticlib, CRATE_DIR};

const DAGS: [&str; 3] = ["wavefront", "broadcast", "independent"];

/// One runtime under test: its name and the compiled program.
struct Contender {
    name: &'static str,
    exe: PathBuf,
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    if let Some(arg) = std::env::args().skip(1).find(|a| a != "--bench") {
        eprintln!("bench-runtime: unexpected argument {arg:?}");
        std::process::exit(2);
    }
    let threads = streamrt::threads_from_env().unwrap_or_else(|e| {
        eprintln!("bench-runtime: {e}");
        std::process::exit(2)
    });
    let rounds = env_count("BENCH_ROUNDS", 3);
    let reps = env_count("BENCH_REPS", 3);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let source = Path::new(CRATE_DIR).join("benches/c/dag_bench.c");

    let lib = staticlib();
    let mut contenders = vec![Contender {
        name: "streamrt",
        exe: compile(
            "cc",
            &source,
            dir.path(),
            "streamrt",
            &[
                "-DUSE_STREAMRT".to_string(),
                format!("-I{}", Path::new(CRATE_DIR).join("include").display()),
                lib.display().to_string(),
                "-lpthread".into(),
                "-ldl".into(),
                "-lm".into(),
            ],
        )
        .unwrap_or_else(|e| fail(&e)),
    }];
    let omp = ["-DUSE_OPENMP".to_string(), "-fopenmp".to_string()];
    match compile("gcc", &source, dir.path(), "libgomp", &omp) {
        Ok(exe) => contenders.push(Contender {
            name: "libgomp",
            exe,
        }),
        Err(e) => fail(&format!("{e}\n(libgomp is the baseline: install gcc)")),
    }
    let mut notes = Vec::new();
    match compile("clang", &source, dir.path(), "libomp", &omp) {
        Ok(exe) => contenders.push(Contender {
            name: "libomp",
            exe,
        }),
        Err(e) => notes.push(format!(
            "libomp: not compared ({}); install clang and libomp-dev to add it",
            e.lines().next().unwrap_or("")
        )),
    }

    println!(
        "streamrt vs OpenMP tasks with depend clauses: {threads} thread(s), median of {rounds} \
         round(s), each the best of {reps} run(s) after a warm-up"
    );
    println!(
        "{:<12} {:>9} {:<9} {:>10} {:>14} {:>12}",
        "dag", "tasks", "runtime", "time (s)", "ns/task", "Mtasks/s"
    );
    let mut ratios = Vec::new();
    for dag in DAGS {
        // seconds[c][round]
        let mut seconds: Vec<Vec<f64>> = vec![Vec::new(); contenders.len()];
        let mut tasks = 0;
        for round in 0..rounds {
            // Alternate the order so that neither runtime always runs on a warmer machine.
            let order: Vec<usize> = if round % 2 == 0 {
                (0..contenders.len()).collect()
            } else {
                (0..contenders.len()).rev().collect()
            };
            for c in order {
                let (n, best) = run(&contenders[c], dag, reps, threads);
                tasks = n;
                seconds[c].push(best);
            }
        }
        let medians: Vec<f64> = seconds.iter_mut().map(|s| median(s)).collect();
        for (c, &t) in contenders.iter().zip(&medians) {
            println!(
                "{:<12} {:>9} {:<9} {:>10.4} {:>14.1} {:>12.2}",
                dag,
                tasks,
                c.name,
                t,
                t * 1e9 / tasks as f64,
                tasks as f64 / t / 1e6
            );
        }
        for (c, &t) in contenders.iter().zip(&medians).skip(1) {
            ratios.push(format!(
                "{dag}: streamrt/{} throughput ratio = {:.2}",
                c.name,
                t / medians[0]
            ));
        }
    }
    println!("(ns/task: wall time of the whole DAG divided by its tasks, with {threads} threads)");
    for line in ratios.iter().chain(&notes) {
        println!("{line}");
    }
}

/// A positive count from the environment variable `name`, or `default`.
fn env_count(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|&n: &usize| n > 0)
            .unwrap_or_else(|| fail(&format!("{name}={v:?}: expected a positive integer"))),
        Err(_) => default,
    }
}

fn fail(message: &str) -> ! {
    eprintln!("bench-runtime: {message}");
    std::process::exit(1)
}

/// Compiles `source` with `compiler -O2 <args>` into `dir/name`; the error says why not.
fn compile(
    compiler: &str,
    source: &Path,
    dir: &Path,
    name: &str,
    args: &[String],
) -> Result<PathBuf, String> {
    let exe = dir.join(name);
    let output = Command::new(compiler)
        .args(["-std=gnu11", "-O2", "-Wall", "-o"])
        .arg(&exe)
        .arg(source)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {compiler}: {e}"))?;
    if output.status.success() {
        Ok(exe)
    } else {
        Err(format!(
            "{compiler} failed on {}:\n{}",
            source.display(),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// Runs `dag` on one contender: (tasks, best seconds of `reps` repetitions).
fn run(c: &Contender, dag: &str, reps: usize, threads: usize) -> (u64, f64) {
    let output = Command::new(&c.exe)
        .args([dag, &reps.to_string()])
        .env("TILEDFLOW_NUM_THREADS", threads.to_string())
        .env("OMP_NUM_THREADS", threads.to_string())
        .output()
        .unwrap_or_else(|e| fail(&format!("cannot run {}: {e}", c.exe.display())));
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        fail(&format!(
            "{} {dag} failed ({}):\n{stdout}{}",
            c.name,
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let mut tasks = 0;
    let mut best = f64::INFINITY;
    for line in stdout.lines() {
        let mut fields = line.split_whitespace();
        let (Some(n), Some(t)) = (fields.next(), fields.next()) else {
            fail(&format!("{} {dag}: unexpected output {line:?}", c.name))
        };
        tasks = n
            .parse()
            .unwrap_or_else(|_| fail(&format!("bad task count {n:?}")));
        let t: f64 = t
            .parse()
            .unwrap_or_else(|_| fail(&format!("bad time {t:?}")));
        best = best.min(t);
    }
    if !best.is_finite() {
        fail(&format!("{} {dag}: no timing printed", c.name));
    }
    (tasks, best)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
