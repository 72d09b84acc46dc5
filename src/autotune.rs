//! `--autotune`: each SCoP's fusion chosen by timing its candidates on this machine instead of by
//! the cost model, remembered so that the next build of the same SCoP is instant and gives the
//! same program.
//!
//! For each fusion heuristic that the model could schedule (`polyhedral::choose_fusion`'s
//! candidates, scheduled under the same limits), the driver generates the SCoP's code as it would
//! for the user, wraps it in a program of its own (`taskgen::harness`: the SCoP's parameters at
//! known values, its arrays allocated and filled), compiles that with the build's C compiler and
//! runs it. Candidates whose code is the same are timed once. The fastest wins; a candidate one
//! of whose runs of the SCoP takes clearly longer than the best candidate's fastest run, or that
//! is still running when the time budget is spent, is stopped. Nothing of the user's program
//! runs: the harness needs no input and no `main`.
//!
//! The winner is kept in the wisdom file (as FFTW keeps its plans), one line per SCoP keyed by a
//! hash of what decides the measurement: the SCoP's text, the target, the parameter values, the C
//! compiler with its flags, the machine (processor, threads, caches) and tiledflow's executable. A
//! later build that finds the key schedules with the remembered heuristic without timing
//! anything. Correctness does not depend on any of it: every candidate is a schedule the verifier
//! accepts, and the choice only decides which of them the user gets.

use polyhedral::Plan;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The settings of `--autotune`.
#[derive(Clone, Debug)]
pub struct Autotune {
    /// The C compiler and the flags to build each harness with (the build's own under
    /// tiledflow-cc); the runtime library and `-fopenmp` are added as the target needs.
    pub cc: Vec<String>,
    /// Parameter values to time at (`--autotune-param n=2000`); a parameter not given takes the
    /// largest value the arrays' declared extents hold (`polyhedral::run_sizes`).
    pub params: Vec<(String, i64)>,
    /// Wall-clock time that timing one SCoP's candidates may take, compiling included.
    pub budget: Duration,
    /// The wisdom file; `None` keeps nothing.
    pub wisdom: Option<PathBuf>,
    /// The streamrt library that the tasks target's harnesses link, or why there is none.
    pub runtime: Result<PathBuf, String>,
}

/// The default of `--autotune-budget`, in seconds: room for three candidates of a kernel that
/// runs a few seconds.
pub const DEFAULT_BUDGET: u64 = 60;

/// The C compiler of the harnesses when the build does not name one (`--autotune-cc`).
pub const DEFAULT_CC: &str = "cc -O3 -march=native";

/// The wisdom file's default place: `$TILEDFLOW_WISDOM`, else `tiledflow/wisdom` under
/// `$XDG_CACHE_HOME` or `~/.cache`; `None` when there is no home.
pub fn default_wisdom() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(p) = var("TILEDFLOW_WISDOM") {
        return Some(PathBuf::from(p));
    }
    let cache = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("tiledflow").join("wisdom"))
}

/// `name=value`, as `--autotune-param` takes it.
pub fn parse_param(text: &str) -> Result<(String, i64), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: expected NAME=VALUE"))?;
    let value = value
        .trim()
        .parse::<i64>()
        .map_err(|_| format!("`{text}`: the value is not an integer"))?;
    Ok((name.trim().to_string(), value))
}

/// The key of one SCoP's measurement in the wisdom file: a 64-bit FNV-1a hash of `parts`
/// (stable across builds and platforms, unlike the standard library's hasher), in hexadecimal.
pub fn key(parts: &[&str]) -> String {
    let h = parts
        .iter()
        .fold(FNV_OFFSET, |h, part| fnv1a(fnv1a(h, part.as_bytes()), &[0]));
    format!("{h:016x}")
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// `h` extended by `bytes` (64-bit FNV-1a).
fn fnv1a(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Which tiledflow generated the code: a hash of its executable (another build may generate
/// other code for the same SCoP), or its version when the executable cannot be read.
pub fn compiler_identity() -> String {
    static IDENTITY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    IDENTITY
        .get_or_init(|| {
            std::env::current_exe()
                .and_then(std::fs::read)
                .map(|bytes| format!("{:016x}", fnv1a(FNV_OFFSET, &bytes)))
                .unwrap_or_else(|_| env!("CARGO_PKG_VERSION").to_string())
        })
        .clone()
}

/// What decides a measurement besides the SCoP: processor, threads and caches.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.to_string())
        })
        .unwrap_or_default();
    let threads = std::env::var("TILEDFLOW_NUM_THREADS").unwrap_or_default();
    format!(
        "{cpu} | {:?} | TILEDFLOW_NUM_THREADS={threads}",
        polyhedral::Machine::detect()
    )
}

/// The plan remembered for `key`, if the wisdom file has it.
pub fn recall(wisdom: &Path, key: &str) -> Option<Plan> {
    let text = std::fs::read_to_string(wisdom).ok()?;
    text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some(key))
            .then(|| words.next().and_then(Plan::parse))
            .flatten()
    })
}

/// Keeps `plan` for `key` in the wisdom file (replacing an older line of the same key), with
/// `note` after it for a reader. The file is rewritten whole and atomically.
pub fn remember(wisdom: &Path, key: &str, plan: &Plan, note: &str) -> std::io::Result<()> {
    if let Some(dir) = wisdom.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let old = std::fs::read_to_string(wisdom).unwrap_or_default();
    let mut text: String = old
        .lines()
        .filter(|l| l.split_whitespace().next() != Some(key))
        .map(|l| format!("{l}\n"))
        .collect();
    if text.is_empty() {
        text.push_str("# tiledflow wisdom: KEY FUSION # what was measured (see `tiledflow --help`, --autotune)\n");
    }
    text.push_str(&format!("{key} {plan} # {note}\n"));
    crate::write_atomically(wisdom, &text)
}

/// One candidate's measurement: the SCoP's seconds, or why there are none.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    pub plan: Plan,
    pub seconds: Result<f64, String>,
}

/// Another candidate replaces the model's choice only when it runs in less than this fraction of
/// its time: a single run of a SCoP that takes tenths of a second varies by a few percent, and a
/// choice decided by that noise would differ from build to build (ludcmp's `min` and `smart`
/// measured 252 and 257 ms; bicg's `min` 1.66 ms against `smart`'s 2.10 ms replaces it).
pub const CLEARLY_FASTER: f64 = 0.97;

/// The plan to build with and its seconds: the fastest timing, unless the model's `chosen` one
/// was timed and the fastest is not [`CLEARLY_FASTER`] than it; `None` when none was timed.
pub fn fastest(timings: &[Timing], chosen: &Plan) -> Option<(Plan, f64)> {
    let timed = || {
        timings
            .iter()
            .filter_map(|t| t.seconds.as_ref().ok().map(|s| (&t.plan, *s)))
    };
    let best = timed().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let (plan, seconds) = match timed().find(|(p, _)| *p == chosen) {
        Some(model) if best.1 >= model.1 * CLEARLY_FASTER => model,
        _ => best,
    };
    Some((plan.clone(), seconds))
}

/// How much longer than the best candidate's fastest run one run of a candidate may take before
/// the candidate is stopped: it cannot win then, and waiting for it only spends the budget.
const SLOWER_STOP: f64 = 1.25;
/// Extra time a run gets before it is stopped, for the noise.
const SLACK: Duration = Duration::from_millis(100);

/// Compiles and runs each harness (`(plan, C text)`, candidates with the same text timed
/// once) for `target` within `tune`'s budget, and returns every candidate's timing in the order
/// given.
pub fn measure(
    harnesses: &[(Plan, String)],
    target: taskgen::Target,
    tune: &Autotune,
) -> Vec<Timing> {
    let deadline = Instant::now() + tune.budget;
    let mut best: Option<f64> = None;
    let mut done: Vec<(&str, Result<f64, String>)> = Vec::new();
    let mut out = Vec::new();
    for (plan, text) in harnesses {
        let seconds = match done.iter().find(|(t, _)| *t == text.as_str()) {
            Some((_, s)) => s.clone(),
            None => {
                let run_limit = best.map(|b| Duration::from_secs_f64(b * SLOWER_STOP) + SLACK);
                let s = compile_and_run(text, target, tune, deadline, run_limit);
                if let Ok(s) = &s {
                    best = Some(best.map_or(*s, |b| b.min(*s)));
                }
                done.push((text, s.clone()));
                s
            }
        };
        out.push(Timing {
            plan: plan.clone(),
            seconds,
        });
    }
    out
}

/// One harness: the SCoP's seconds it printed, or why there are none. A run of the SCoP that
/// takes longer than `run_limit` stops it, as does the `deadline`.
fn compile_and_run(
    text: &str,
    target: taskgen::Target,
    tune: &Autotune,
    deadline: Instant,
    run_limit: Option<Duration>,
) -> Result<f64, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let src = dir.path().join("harness.c");
    let exe = dir.path().join("harness");
    std::fs::write(&src, text).map_err(|e| format!("cannot write the harness: {e}"))?;
    let (cc, flags) = tune
        .cc
        .split_first()
        .ok_or_else(|| "no C compiler given".to_string())?;
    let mut cmd = Command::new(cc);
    cmd.args(flags).arg(&src).arg("-o").arg(&exe);
    match target {
        taskgen::Target::Tasks | taskgen::Target::Cuda => {
            let lib = tune.runtime.as_ref().map_err(Clone::clone)?;
            cmd.arg(lib).args(["-lpthread", "-ldl"]);
        }
        taskgen::Target::Omp => {
            cmd.arg("-fopenmp");
        }
        taskgen::Target::Seq => {}
    }
    cmd.arg("-lm");
    let built = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    if !built.status.success() {
        let stderr = String::from_utf8_lossy(&built.stderr);
        let first = stderr
            .lines()
            .find(|l| l.contains("error:") || l.contains("undefined reference"))
            .unwrap_or("")
            .to_string();
        return Err(format!("the harness did not compile ({first})"));
    }
    let mut child = Command::new(&exe)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run the harness: {e}"))?;
    // Its lines as they come, each with when it came: a run starts at its START_LABEL.
    let (tx, lines) = std::sync::mpsc::channel::<(Instant, String)>();
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(out)).map_while(Result::ok)
            {
                if tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
    }
    let mut run_started: Option<Instant> = None;
    let mut seconds = None;
    let status = loop {
        let exited = child
            .try_wait()
            .map_err(|e| format!("cannot wait for the harness: {e}"))?;
        for (at, line) in lines.try_iter() {
            if line == taskgen::harness::START_LABEL {
                run_started = Some(at);
            } else if let Some(s) = line.strip_prefix(taskgen::harness::SECONDS_LABEL) {
                seconds = s.trim().parse::<f64>().ok();
            }
        }
        if let Some(status) = exited {
            break status;
        }
        let now = Instant::now();
        let slow = run_started
            .zip(run_limit)
            .is_some_and(|(start, limit)| now >= start + limit);
        if now >= deadline || slow {
            let _ = child.kill();
            let _ = child.wait();
            return Err(match now >= deadline {
                true => "stopped: the time budget (--autotune-budget) was spent".to_string(),
                false => "stopped: slower than the best candidate".to_string(),
            });
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    if !status.success() {
        return Err(format!("the harness failed ({status})"));
    }
    // The reader may still hold the last lines.
    for (_, line) in lines.iter() {
        if let Some(s) = line.strip_prefix(taskgen::harness::SECONDS_LABEL) {
            seconds = s.trim().parse::<f64>().ok();
        }
    }
    seconds.ok_or_else(|| "the harness printed no time".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use frontend::ir::StmtId;
    use polyhedral::Fuse;

    #[test]
    fn keys_are_fnv1a_and_separate_their_parts() {
        // FNV-1a of the empty string followed by the separator byte 0, by hand:
        // (0xcbf29ce484222325 ^ 0) * 0x100000001b3 mod 2^64.
        assert_eq!(
            key(&[""]),
            format!(
                "{:016x}",
                0xcbf2_9ce4_8422_2325u64.wrapping_mul(0x0100_0000_01b3)
            )
        );
        assert_ne!(key(&["ab", "c"]), key(&["a", "bc"]));
        assert_eq!(key(&["x", "y"]), key(&["x", "y"]));
    }

    #[test]
    fn wisdom_is_recalled_and_replaced_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join("sub").join("wisdom");
        let h = Plan::Heuristic;
        let blocks = Plan::Blocks(vec![
            vec![StmtId(0), StmtId(1)],
            vec![StmtId(2)],
            vec![StmtId(3)],
        ]);
        assert_eq!(recall(&w, "k1"), None);
        remember(&w, "k1", &h(Fuse::Min), "f() line 3").unwrap();
        remember(&w, "k2", &h(Fuse::Max), "g() line 9").unwrap();
        remember(&w, "k3", &blocks, "h() line 1").unwrap();
        assert_eq!(recall(&w, "k1"), Some(h(Fuse::Min)));
        remember(&w, "k1", &h(Fuse::Smart), "again").unwrap();
        assert_eq!(recall(&w, "k1"), Some(h(Fuse::Smart)));
        assert_eq!(recall(&w, "k2"), Some(h(Fuse::Max)));
        assert_eq!(recall(&w, "k3"), Some(blocks));
        let text = std::fs::read_to_string(&w).unwrap();
        assert_eq!(
            text.lines().filter(|l| l.starts_with("k1 ")).count(),
            1,
            "{text}"
        );
        assert!(text.contains("k3 S0+S1,S2,S3 # h() line 1"), "{text}");
    }

    #[test]
    fn the_models_choice_stays_unless_another_is_clearly_faster() {
        let t = |fuse, s: Result<f64, &str>| Timing {
            plan: Plan::Heuristic(fuse),
            seconds: s.map_err(String::from),
        };
        let h = Plan::Heuristic;
        let close = [
            t(Fuse::Smart, Ok(0.257)),
            t(Fuse::Min, Ok(0.252)),
            t(Fuse::Max, Err("stopped")),
        ];
        assert_eq!(
            fastest(&close, &h(Fuse::Smart)),
            Some((h(Fuse::Smart), 0.257))
        );
        let clear = [
            t(Fuse::Smart, Ok(2.10)),
            t(Fuse::Max, Ok(2.10)),
            t(Fuse::Min, Ok(1.66)),
        ];
        assert_eq!(fastest(&clear, &h(Fuse::Smart)), Some((h(Fuse::Min), 1.66)));
        // The model's choice could not be timed: the fastest of the others.
        let failed = [
            t(Fuse::Min, Err("did not compile")),
            t(Fuse::Max, Ok(3.0)),
            t(Fuse::Smart, Ok(2.0)),
        ];
        assert_eq!(fastest(&failed, &h(Fuse::Min)), Some((h(Fuse::Smart), 2.0)));
        assert_eq!(fastest(&[t(Fuse::Min, Err("x"))], &h(Fuse::Min)), None);
    }

    #[test]
    fn params_parse_as_name_equals_integer() {
        assert_eq!(parse_param("n=2000"), Ok(("n".to_string(), 2000)));
        assert!(parse_param("n").is_err());
        assert!(parse_param("n=big").is_err());
    }
}
