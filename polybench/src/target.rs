//! The targets a kernel is built for: tiledflow's (any `--tiledflow-target=` name, so that a new
//! target of the compiler is measured without a change here), `cuda-emu` (the cuda target run on
//! streamrt's emulated device) and the peer compilers, and how each one's build command is made
//! and its programs are run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The compiler of the `polly` peer (Debian's clang 19 has Polly built in).
pub const POLLY_CC: &str = "clang-19";
/// The compiler of the `graphite` peer.
pub const GRAPHITE_CC: &str = "gcc";

/// The fusion heuristics a target may name after `@` (tiledflow-cc's `--tiledflow-fuse`), and
/// `tuned`: each SCoP's fusion timed on this machine (`--tiledflow-autotune`, remembered in
/// tiledflow's wisdom file, `TILEDFLOW_WISDOM`).
pub const FUSIONS: &[&str] = &["auto", "min", "smart", "max", "reuse", "tuned"];

/// The environment variable that chooses the cuda target's device (streamrt's `GPU_ENV`).
pub const GPU_ENV: &str = "TILEDFLOW_GPU";

/// One way of building a kernel besides the original.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Target {
    /// `tiledflow-cc --tiledflow-target=<name>`.
    Tiledflow(String),
    /// `cuda-emu`: `tiledflow-cc --tiledflow-target=cuda` (which links the emulated kernels), run
    /// with `TILEDFLOW_GPU=emulate`.
    CudaEmulated,
    /// clang 19 with Polly's automatic parallelization.
    Polly,
    /// gcc with Graphite's automatic parallelization.
    Graphite,
}

impl Target {
    /// `polly` and `graphite` are the peers; every other name is a tiledflow target, checked by
    /// tiledflow-cc itself when it builds. Names are lower-case words (letters, digits, `-`, `_`);
    /// a tiledflow target may name a fusion heuristic after `@` (`tasks@min`: built with
    /// `--tiledflow-fuse=min`), so that the heuristics are measured side by side, and a thread
    /// count after `:` (`tasks:1`: run on one thread whatever `--threads` says), so that a
    /// target's parallel efficiency is measured in one run.
    pub fn parse(name: &str) -> Result<Target, String> {
        let name = name.trim();
        if let Some((base, threads)) = name.rsplit_once(':') {
            if !threads.parse::<usize>().is_ok_and(|n| n >= 1) {
                return Err(format!(
                    "target `{name}`: expected a number of threads (1 or more) after `:`"
                ));
            }
            return match Target::parse(base)? {
                Target::Tiledflow(_) => Ok(Target::Tiledflow(name.to_string())),
                _ => Err(format!(
                    "target `{name}`: only tiledflow's targets take a thread count"
                )),
            };
        }
        let word = |w: &str| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        };
        let (base, fuse) = match name.split_once('@') {
            Some((base, fuse)) => (base, Some(fuse)),
            None => (name, None),
        };
        if !word(base) {
            return Err(format!(
                "target `{name}`: expected a name such as seq, tasks, omp, polly or graphite"
            ));
        }
        if let Some(fuse) = fuse {
            if !FUSIONS.contains(&fuse) || matches!(base, "cuda-emu" | "polly" | "graphite") {
                return Err(format!(
                    "target `{name}`: expected a tiledflow target and a fusion after `@` ({})",
                    FUSIONS.join(", ")
                ));
            }
        }
        Ok(match name {
            "cuda-emu" => Target::CudaEmulated,
            "polly" => Target::Polly,
            "graphite" => Target::Graphite,
            other => Target::Tiledflow(other.to_string()),
        })
    }

    /// The name used on the command line and in reports.
    pub fn name(&self) -> &str {
        match self {
            Target::Tiledflow(t) => t,
            Target::CudaEmulated => "cuda-emu",
            Target::Polly => "polly",
            Target::Graphite => "graphite",
        }
    }

    /// Whether this is a peer compiler (which may be absent from the machine).
    pub fn is_peer(&self) -> bool {
        matches!(self, Target::Polly | Target::Graphite)
    }

    /// The name without its thread count (`tasks@min` for `tasks@min:1`).
    fn build_name(&self) -> &str {
        let name = self.name();
        match self {
            Target::Tiledflow(_) => name.rsplit_once(':').map_or(name, |(base, _)| base),
            _ => name,
        }
    }

    /// The thread count its programs run on when the name gives one (`tasks:1`).
    pub fn threads(&self) -> Option<usize> {
        match self {
            Target::Tiledflow(t) => t.rsplit_once(':').and_then(|(_, n)| n.parse().ok()),
            _ => None,
        }
    }

    /// The target whose programs this one runs on another number of threads (`tasks` for
    /// `tasks:1`), if it names a thread count.
    pub fn all_threads(&self) -> Option<Target> {
        self.threads()
            .map(|_| Target::Tiledflow(self.build_name().to_string()))
    }

    /// tiledflow's `--target` for this target (`cuda` for `cuda-emu`); `None` for the peers.
    pub fn tiledflow_target(&self) -> Option<&str> {
        match self {
            Target::Tiledflow(_) => {
                let t = self.build_name();
                Some(t.split_once('@').map_or(t, |(base, _)| base))
            }
            Target::CudaEmulated => Some("cuda"),
            Target::Polly | Target::Graphite => None,
        }
    }

    /// Whether this is the cuda target (real or emulated device), whose runs are checked for
    /// where the SCoPs ran (see the crate doc).
    pub fn is_cuda(&self) -> bool {
        self.tiledflow_target() == Some("cuda")
    }

    /// The environment of its programs: `cuda-emu` asks for the emulated device, `cuda` for the
    /// real one (whatever `TILEDFLOW_GPU` the runner inherited).
    pub fn run_env(&self) -> &'static [(&'static str, &'static str)] {
        match self {
            Target::CudaEmulated => &[(GPU_ENV, "emulate")],
            _ if self.is_cuda() => &[(GPU_ENV, "cuda")],
            _ => &[],
        }
    }

    /// The compiler driver and the arguments that follow the base flags.
    pub fn build_command(
        &self,
        bin_dir: &Path,
        threads: usize,
        tile_sizes: Option<&str>,
    ) -> (PathBuf, Vec<String>) {
        match self {
            Target::Tiledflow(_) | Target::CudaEmulated => {
                let name = self.tiledflow_target().unwrap_or_default();
                let mut args = vec![
                    "--tiledflow-strict".to_string(),
                    format!("--tiledflow-target={name}"),
                ];
                if self.is_cuda() {
                    // Its notes say which SCoPs stay on the CPU.
                    args.push("--tiledflow-verbose".to_string());
                }
                if let Some(ts) = tile_sizes {
                    args.push(format!("--tiledflow-tile-sizes={ts}"));
                }
                match self.build_name().split_once('@') {
                    Some((_, "tuned")) => args.push("--tiledflow-autotune".to_string()),
                    Some((_, fuse)) => args.push(format!("--tiledflow-fuse={fuse}")),
                    None => {}
                }
                (bin_dir.join("tiledflow-cc"), args)
            }
            Target::Polly => (
                PathBuf::from(POLLY_CC),
                ["-mllvm", "-polly", "-mllvm", "-polly-parallel", "-fopenmp"]
                    .map(String::from)
                    .to_vec(),
            ),
            Target::Graphite => (
                PathBuf::from(GRAPHITE_CC),
                vec![
                    "-floop-parallelize-all".to_string(),
                    format!("-ftree-parallelize-loops={threads}"),
                ],
            ),
        }
    }

    /// For a peer: whether its compiler is installed and accepts its flags, tried on a tiny
    /// program; the error says what is missing. Tiledflow targets are always `Ok` (tiledflow-cc
    /// judges them per build).
    pub fn probe(&self, bin_dir: &Path, threads: usize) -> Result<(), String> {
        if !self.is_peer() {
            return Ok(());
        }
        let (driver, args) = self.build_command(bin_dir, threads, None);
        let dir = tempfile::Builder::new()
            .prefix("polybench-probe.")
            .tempdir()
            .map_err(|e| format!("temporary directory: {e}"))?;
        let src = dir.path().join("probe.c");
        let program = "double a[64];\nint main(void) {\n  for (int i = 0; i < 64; i++) a[i] = i;\n  return a[3] == 3.0 ? 0 : 1;\n}\n";
        std::fs::write(&src, program).map_err(|e| format!("{}: {e}", src.display()))?;
        testsuite::compile_in_env(
            &driver,
            &[&src],
            &args,
            &dir.path().join("probe"),
            &[],
            Duration::from_secs(60),
        )
        .map(|_| ())
        .map_err(|e| {
            let first = format!("{e:#}");
            let first = first.lines().next().unwrap_or_default().to_string();
            format!(
                "`{}` cannot build with its flags ({first})",
                driver.display()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_to_peers_or_tiledflow_targets() {
        assert_eq!(Target::parse("polly").unwrap(), Target::Polly);
        assert_eq!(Target::parse("graphite").unwrap(), Target::Graphite);
        assert_eq!(
            Target::parse(" omp").unwrap(),
            Target::Tiledflow("omp".to_string())
        );
        assert!(Target::parse("").is_err());
        assert!(Target::parse("seq tasks").is_err());
        assert!(Target::parse("Seq").is_err());
        let min = Target::parse("tasks@min").unwrap();
        assert_eq!(
            (min.name(), min.tiledflow_target()),
            ("tasks@min", Some("tasks"))
        );
        let (_, args) = min.build_command(Path::new("/b"), 2, None);
        assert!(
            args.contains(&"--tiledflow-fuse=min".to_string()),
            "{args:?}"
        );
        assert!(Target::parse("tasks@fast").is_err());
        let (_, args) =
            Target::parse("tasks@tuned")
                .unwrap()
                .build_command(Path::new("bin"), 2, None);
        assert!(
            args.contains(&"--tiledflow-autotune".to_string()),
            "{args:?}"
        );
        assert!(
            !args.iter().any(|a| a.starts_with("--tiledflow-fuse")),
            "{args:?}"
        );
        assert!(Target::parse("polly@min").is_err());
        assert!(Target::parse("@min").is_err());
        assert_eq!(Target::parse("tasks").unwrap().name(), "tasks");
        let emu = Target::parse("cuda-emu").unwrap();
        assert_eq!(emu, Target::CudaEmulated);
        assert_eq!(
            (emu.name(), emu.tiledflow_target(), emu.is_peer()),
            ("cuda-emu", Some("cuda"), false)
        );
    }

    #[test]
    fn a_thread_count_runs_the_same_build_on_other_threads() {
        let one = Target::parse("tasks@min:1").unwrap();
        assert_eq!(one.name(), "tasks@min:1");
        assert_eq!(one.threads(), Some(1));
        assert_eq!(one.tiledflow_target(), Some("tasks"));
        assert_eq!(one.all_threads(), Some(Target::parse("tasks@min").unwrap()));
        let (_, args) = one.build_command(Path::new("/b"), 2, None);
        assert!(
            args.contains(&"--tiledflow-fuse=min".to_string()),
            "{args:?}"
        );
        assert!(
            args.contains(&"--tiledflow-target=tasks".to_string()),
            "{args:?}"
        );
        assert_eq!(Target::parse("omp:4").unwrap().threads(), Some(4));
        assert_eq!(Target::parse("tasks").unwrap().threads(), None);
        assert_eq!(Target::parse("tasks").unwrap().all_threads(), None);
        for bad in [
            "tasks:0",
            "tasks:",
            "tasks:two",
            "polly:1",
            "cuda-emu:1",
            ":1",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cuda_targets_choose_their_device_and_ask_for_notes() {
        let bin = Path::new("/b");
        let (drv, args) = Target::CudaEmulated.build_command(bin, 2, None);
        assert_eq!(drv, Path::new("/b/tiledflow-cc"));
        assert_eq!(
            args,
            [
                "--tiledflow-strict",
                "--tiledflow-target=cuda",
                "--tiledflow-verbose"
            ]
        );
        assert_eq!(Target::CudaEmulated.run_env(), [(GPU_ENV, "emulate")]);
        let cuda = Target::parse("cuda").unwrap();
        assert!(cuda.is_cuda());
        assert_eq!(cuda.run_env(), [(GPU_ENV, "cuda")]);
        assert_eq!(cuda.build_command(bin, 2, None).1, args);
        let seq = Target::parse("seq").unwrap();
        assert!(!seq.is_cuda() && seq.run_env().is_empty());
        assert!(!Target::Polly.is_cuda());
    }

    #[test]
    fn build_commands_carry_each_targets_flags() {
        let bin = Path::new("/b");
        let (drv, args) = Target::Tiledflow("seq".into()).build_command(bin, 2, Some("8,4"));
        assert_eq!(drv, Path::new("/b/tiledflow-cc"));
        assert_eq!(
            args,
            [
                "--tiledflow-strict",
                "--tiledflow-target=seq",
                "--tiledflow-tile-sizes=8,4"
            ]
        );
        let (drv, args) = Target::Graphite.build_command(bin, 3, Some("8"));
        assert_eq!(drv, Path::new("gcc"));
        assert_eq!(
            args,
            ["-floop-parallelize-all", "-ftree-parallelize-loops=3"]
        );
        let (drv, args) = Target::Polly.build_command(bin, 3, None);
        assert_eq!(drv, Path::new("clang-19"));
        assert!(args.windows(2).any(|w| w == ["-mllvm", "-polly-parallel"]));
    }
}
