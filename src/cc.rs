//! `tiledflow-cc`: a drop-in C compiler driver, as pure functions over its command line.
//!
//! [`parse`] classifies a cc command line: which arguments are C sources tiledflow transforms,
//! which flags the parser needs too (`-I`, `-D`, `-U`, `-std=`, ...), whether the command links,
//! and where dependency files (`-MD`, `-MF`, ...) go. Everything that is not tiledflow's is kept,
//! in order, for the real compiler. The binary (`src/bin/tiledflow-cc.rs`) runs tiledflow on each
//! source into a private temporary directory, runs the real compiler (`TILEDFLOW_CC`, default
//! `cc`) on the transformed sources, links streamrt when the command links, and makes the
//! dependency files name the user's sources ([`fix_dependency_file`]).
//!
//! What is transformed: C sources (`.c`, or any file or `-` after `-x c`) of a command that
//! compiles (`-c`, `-S`, or a link), also when listed in `@response` files
//! ([`expand_response_files`]). Preprocessing-only commands (`-E`, `-M`, `-MM`, `-fsyntax-only`)
//! and other languages reach the compiler untouched. The parser is as lenient as cc
//! ([`LENIENT_PARSER_FLAGS`]).
//!
//! Options that start with `--tiledflow-` are tiledflow's and never reach the compiler; they are
//! listed in [`TILEDFLOW_OPTIONS`]. An unknown one is an error. This module runs no process and
//! touches no file except in [`fix_dependency_file`].

use std::path::{Path, PathBuf};
use taskgen::Target;

/// Options of tiledflow itself: `(name, value, what it does)`. `--tiledflow-help` prints them.
pub const TILEDFLOW_OPTIONS: &[(&str, &str, &str)] = &[
    (
        "strict",
        "",
        "fail when a source cannot be transformed (also TILEDFLOW_STRICT=1)",
    ),
    ("target", "tasks|seq|omp|cuda", "code to generate (default tasks; omp adds -fopenmp; cuda: GPU kernels too, NVRTC at run time)"),
    (
        "tile-sizes",
        "N[,N...]",
        "tile sizes per band dimension, outermost first",
    ),
    ("no-tile", "", "do not tile: each loop nest is one task"),
    (
        "no-line-shift",
        "",
        "keep each tile grid where the schedule puts it (by default a nest that updates rows of whole cache lines in place may have its grid shifted at run time onto an array's lines)",
    ),
    (
        "no-spread",
        "",
        "leave each task to the runtime's placement (by default the tiles of a parallel loop are spread over the threads in one block per thread)",
    ),
    (
        "no-interleave",
        "",
        "spawn each nest's tiles after the previous nest's (by default the tiles of consecutive nests that depend on one another are spawned together)",
    ),
    (
        "scop-time-limit",
        "SECONDS",
        "CPU seconds one SCoP may take to compile; past them it is left as written (default 60; 0: none)",
    ),
    (
        "scop",
        "auto|pragma",
        "where the SCoPs are (default: pragma if the file has #pragma scop, else auto)",
    ),
    (
        "replace-pragmas",
        "",
        "under auto, transform the loop nests that carry their own pragmas too, replacing the pragmas (also TILEDFLOW_REPLACE_PRAGMAS=1)",
    ),
    (
        "fuse",
        "auto|min|smart|max|reuse|S0+S1,S2,..",
        "fusion heuristic, or blocks of statements fused each (default auto: the cost model's choice per SCoP; also TILEDFLOW_FUSE)",
    ),
    (
        "granularity",
        "tile|intraband|interband",
        "how many tiles one task runs (default tile)",
    ),
    (
        "verbose",
        "",
        "print one line per SCoP on stderr (statements, bands, tasks, time)",
    ),
    (
        "keep",
        "DIR",
        "also write each transformed source to DIR (which must exist)",
    ),
    (
        "report",
        "FILE",
        "append one JSON line per source to FILE: its SCoPs, those left as written and why, the \
         nests that are not SCoPs and why, whether it was compiled as written (also TILEDFLOW_REPORT)",
    ),
    (
        "autotune",
        "",
        "time each SCoP's fusion candidates on this machine with this compiler and flags, keep the fastest \
         (also TILEDFLOW_AUTOTUNE=1; remembered in TILEDFLOW_WISDOM, default ~/.cache/tiledflow/wisdom)",
    ),
    ("help", "", "print this help"),
];

/// The code generation targets by name, for `--tiledflow-target=`.
pub const TARGETS: &[(&str, Target)] = &[
    ("tasks", Target::Tasks),
    ("seq", Target::Seq),
    ("omp", Target::Omp),
    ("cuda", Target::Cuda),
];

/// What the command makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Compiles and links a program or library (neither `-c`, `-S`, `-E` nor `-M`/`-MM`).
    Link,
    /// Compiles to objects or assembly (`-c`, `-S`).
    Compile,
    /// Preprocesses or checks only (`-E`, `-M`, `-MM`, `-fsyntax-only`): nothing is transformed.
    Preprocess,
}

/// tiledflow's own options of one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TiledflowOptions {
    pub strict: bool,
    pub target: Target,
    pub tile_sizes: Option<Vec<i64>>,
    pub no_tile: bool,
    /// `--tiledflow-no-line-shift`.
    pub no_line_shift: bool,
    /// `--tiledflow-no-spread`.
    pub no_spread: bool,
    /// `--tiledflow-no-interleave`.
    pub no_interleave: bool,
    /// `--tiledflow-scop-time-limit`, in CPU seconds (0: none).
    pub scop_time_limit: u64,
    pub scop: frontend::ScopMode,
    /// `--tiledflow-replace-pragmas` (or `TILEDFLOW_REPLACE_PRAGMAS=1`).
    pub replace_pragmas: bool,
    pub granularity: taskgen::Granularity,
    /// `--tiledflow-fuse`; `None` when not given (then `TILEDFLOW_FUSE`, else auto).
    pub fuse: Option<crate::Fusion>,
    pub verbose: bool,
    pub keep: Option<PathBuf>,
    /// `--tiledflow-report` (or `TILEDFLOW_REPORT`).
    pub report: Option<PathBuf>,
    /// `--tiledflow-autotune` (or `TILEDFLOW_AUTOTUNE=1`).
    pub autotune: bool,
    pub help: bool,
}

impl Default for TiledflowOptions {
    fn default() -> Self {
        TiledflowOptions {
            strict: false,
            target: Target::default(),
            tile_sizes: None,
            no_tile: false,
            no_line_shift: false,
            no_spread: false,
            no_interleave: false,
            scop_time_limit: crate::DEFAULT_SCOP_TIME_LIMIT,
            scop: frontend::ScopMode::default(),
            replace_pragmas: false,
            granularity: taskgen::Granularity::default(),
            fuse: None,
            verbose: false,
            keep: None,
            report: None,
            autotune: false,
            help: false,
        }
    }
}

/// A cc command line, classified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcCommand {
    /// All arguments for the real compiler, in order; `sources` index into it.
    pub args: Vec<String>,
    /// Positions in `args` of the C sources tiledflow transforms (`-` is standard input).
    pub sources: Vec<usize>,
    /// Flags the parser needs too: `-I`, `-D`, `-U`, `-std=`, `-include`, `-isystem`, ...
    pub parser_flags: Vec<String>,
    pub mode: Mode,
    /// Whether the command names any input (a file, `-`, or `-l`): without one (`cc --version`)
    /// nothing is linked.
    pub has_inputs: bool,
    /// `-o FILE`.
    pub output: Option<String>,
    /// Whether the compiler writes dependency files as a side effect (`-MD`, `-MMD`).
    pub writes_dependencies: bool,
    /// `-MF FILE`.
    pub dependency_file: Option<String>,
    pub ours: TiledflowOptions,
}

impl CcCommand {
    /// Whether the command links a program, so that streamrt must be linked too.
    pub fn links(&self) -> bool {
        self.mode == Mode::Link && self.has_inputs
    }
}

/// Options with a separate value that the parser needs too, flag and value (`-I dir`).
#[rustfmt::skip]
pub const PARSER_TAKES_VALUE: &[&str] = &[
    "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-isysroot",
];

/// Options with an attached value that the parser needs too (`-Idir`, `-DN=10`, `-std=c99`).
#[rustfmt::skip]
pub const PARSER_PREFIXES: &[&str] = &[
    "-I", "-D", "-U", "-std=", "-isystem", "-iquote", "-idirafter", "--sysroot=",
];

/// The other options of cc that take their value in the next argument.
#[rustfmt::skip]
pub const OTHER_TAKES_VALUE: &[&str] = &[
    "-o", "-x", "-MF", "-MT", "-MQ", "-L", "-l", "-iprefix", "-iwithprefix", "-iwithprefixbefore",
    "-imultilib", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-T", "-u", "-z", "-e", "--param",
    "-aux-info", "-dumpbase", "-dumpdir", "-B",
];

/// Flags that make the parser accept what gcc before version 14 accepts with a warning (implicit
/// function declarations, implicit `int`, integer-pointer conversions), as `cc` does: a build
/// that compiles with cc must not lose its SCoPs to libclang's stricter defaults. `-w`: the
/// compiler gives the user's warnings, once.
pub const LENIENT_PARSER_FLAGS: &[&str] = &[
    "-w",
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=implicit-int",
    "-Wno-error=int-conversion",
    "-Wno-error=incompatible-function-pointer-types",
];

/// How many arguments a preprocessor or language flag the parser needs spans: 2 for `-I dir`,
/// 1 for `-Idir`, `-DN=10`, `-std=c99`, `-ansi`; `None` for anything else.
pub fn parser_flag_len(a: &str) -> Option<usize> {
    if PARSER_TAKES_VALUE.contains(&a) {
        Some(2)
    } else if a == "-ansi"
        || PARSER_PREFIXES
            .iter()
            .any(|p| a.len() > p.len() && a.starts_with(p))
    {
        Some(1)
    } else {
        None
    }
}

/// Expands gcc's response files: an argument `@FILE` is replaced by the arguments written in
/// FILE (separated by white space; quotes and backslashes as in a shell word; nested `@FILE`s
/// expanded too). As in gcc, `@FILE` naming no readable file stays as it is.
pub fn expand_response_files(argv: &[String]) -> Vec<String> {
    fn expand(argv: &[String], depth: usize, out: &mut Vec<String>) {
        for a in argv {
            let text = match a.strip_prefix('@') {
                Some(f) if depth < 16 => std::fs::read_to_string(f).ok(),
                _ => None,
            };
            match text {
                Some(text) => expand(&split_response_file(&text), depth + 1, out),
                None => out.push(a.clone()),
            }
        }
    }
    let mut out = Vec::new();
    expand(argv, 0, &mut out);
    out
}

/// The arguments of a response file.
fn split_response_file(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut cur: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (_, '\\') => {
                if let Some(next) = chars.next() {
                    cur.get_or_insert_with(String::new).push(next);
                }
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => args.extend(cur.take()),
            (None, c) => cur.get_or_insert_with(String::new).push(c),
        }
    }
    args.extend(cur);
    args
}

/// Classifies a cc command line (without `argv[0]`).
pub fn parse(argv: &[String]) -> Result<CcCommand, String> {
    let mut cmd = CcCommand {
        args: Vec::new(),
        sources: Vec::new(),
        parser_flags: Vec::new(),
        mode: Mode::Link,
        has_inputs: false,
        output: None,
        writes_dependencies: false,
        dependency_file: None,
        ours: TiledflowOptions::default(),
    };
    let mut preprocess_only = false;
    let mut compile_only = false;
    // `-x LANG` makes later inputs LANG; `-x none` (or no `-x`) goes back to file name suffixes.
    let mut language: Option<String> = None;
    let mut k = 0;
    while k < argv.len() {
        let a = &argv[k];
        if let Some(opt) = a.strip_prefix("--tiledflow-") {
            tiledflow_option(&mut cmd.ours, opt)?;
            k += 1;
            continue;
        }
        if PARSER_TAKES_VALUE.contains(&a.as_str()) || OTHER_TAKES_VALUE.contains(&a.as_str()) {
            let v = argv
                .get(k + 1)
                .ok_or_else(|| format!("missing argument after {a}"))?;
            match a.as_str() {
                "-o" => cmd.output = Some(v.clone()),
                "-MF" => cmd.dependency_file = Some(v.clone()),
                "-x" => language = Some(v.clone()).filter(|l| l != "none"),
                "-l" => cmd.has_inputs = true,
                _ => {}
            }
            if PARSER_TAKES_VALUE.contains(&a.as_str()) {
                cmd.parser_flags.extend([a.clone(), v.clone()]);
            }
            cmd.args.extend([a.clone(), v.clone()]);
            k += 2;
            continue;
        }
        match a.as_str() {
            "-c" | "-S" => compile_only = true,
            "-E" | "-M" | "-MM" | "-fsyntax-only" => preprocess_only = true,
            "-MD" | "-MMD" => cmd.writes_dependencies = true,
            "-" => {
                cmd.has_inputs = true;
                if language.as_deref() == Some("c") {
                    cmd.sources.push(cmd.args.len());
                }
            }
            _ if a.starts_with('-') => {
                if let Some(lang) = a.strip_prefix("-x") {
                    language = Some(lang.to_string()).filter(|l| l != "none");
                } else if let Some(o) = a.strip_prefix("-o") {
                    cmd.output = Some(o.to_string());
                } else if let Some(f) = a.strip_prefix("-MF") {
                    cmd.dependency_file = Some(f.to_string());
                } else if a.starts_with("-l") {
                    cmd.has_inputs = true;
                } else if parser_flag_len(a) == Some(1) {
                    cmd.parser_flags.push(a.clone());
                }
            }
            _ => {
                cmd.has_inputs = true;
                let is_c = match language.as_deref() {
                    Some(lang) => lang == "c",
                    None => a.ends_with(".c"),
                };
                if is_c {
                    cmd.sources.push(cmd.args.len());
                }
            }
        }
        cmd.args.push(a.clone());
        k += 1;
    }
    cmd.mode = if preprocess_only {
        Mode::Preprocess
    } else if compile_only {
        Mode::Compile
    } else {
        Mode::Link
    };
    if cmd.mode == Mode::Preprocess {
        cmd.sources.clear();
    }
    Ok(cmd)
}

fn tiledflow_option(ours: &mut TiledflowOptions, opt: &str) -> Result<(), String> {
    let (name, value) = match opt.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (opt, None),
    };
    let Some(&(_, wants, _)) = TILEDFLOW_OPTIONS.iter().find(|(n, _, _)| *n == name) else {
        return Err(format!("unknown option --tiledflow-{opt}\n{}", help_text()));
    };
    let value = match (wants.is_empty(), value) {
        (true, None) => "",
        (false, Some(v)) => v,
        (true, Some(_)) => return Err(format!("--tiledflow-{name} takes no value")),
        (false, None) => {
            return Err(format!(
                "--tiledflow-{name} needs a value: --tiledflow-{name}={wants}"
            ))
        }
    };
    match name {
        "strict" => ours.strict = true,
        "no-tile" => ours.no_tile = true,
        "no-line-shift" => ours.no_line_shift = true,
        "no-spread" => ours.no_spread = true,
        "no-interleave" => ours.no_interleave = true,
        "verbose" => ours.verbose = true,
        "help" => ours.help = true,
        "keep" => ours.keep = Some(PathBuf::from(value)),
        "report" => ours.report = Some(PathBuf::from(value)),
        "scop-time-limit" => {
            ours.scop_time_limit = value.parse().map_err(|_| {
                format!("--tiledflow-scop-time-limit={value}: expected a number of seconds")
            })?
        }
        "scop" => {
            ours.scop = match value {
                "auto" => frontend::ScopMode::Auto,
                "pragma" => frontend::ScopMode::Pragma,
                _ => return Err(format!("--tiledflow-scop={value}: expected auto or pragma")),
            }
        }
        "autotune" => ours.autotune = true,
        "replace-pragmas" => ours.replace_pragmas = true,
        "fuse" => {
            ours.fuse = Some(crate::Fusion::parse(value).ok_or_else(|| {
                format!("--tiledflow-fuse={value}: expected {}", crate::FUSION_NAMES)
            })?)
        }
        "granularity" => {
            ours.granularity = match value {
                "tile" => taskgen::Granularity::Tile,
                "intraband" => taskgen::Granularity::Intraband,
                "interband" => taskgen::Granularity::Interband,
                _ => {
                    return Err(format!(
                        "--tiledflow-granularity={value}: expected tile, intraband or interband"
                    ))
                }
            }
        }
        "target" => {
            ours.target = TARGETS
                .iter()
                .find(|(n, _)| *n == value)
                .map(|&(_, t)| t)
                .ok_or_else(|| {
                    let names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
                    format!(
                        "--tiledflow-target={value}: expected one of {}",
                        names.join(", ")
                    )
                })?
        }
        "tile-sizes" => {
            let sizes: Result<Vec<i64>, _> =
                value.split(',').map(|x| x.trim().parse::<i64>()).collect();
            match sizes {
                Ok(s) if !s.is_empty() && s.iter().all(|&x| x >= 1) => ours.tile_sizes = Some(s),
                _ => {
                    return Err(format!(
                        "--tiledflow-tile-sizes={value}: expected positive integers separated by commas"
                    ))
                }
            }
        }
        other => {
            return Err(format!(
                "--tiledflow-{other} is listed but not handled (a tiledflow bug)"
            ))
        }
    }
    Ok(())
}

/// The help of `--tiledflow-help`, and the list an unknown option's error shows.
pub fn help_text() -> String {
    let mut s = String::from("tiledflow options (every other argument goes to the compiler):\n");
    for (name, value, what) in TILEDFLOW_OPTIONS {
        let flag = if value.is_empty() {
            format!("--tiledflow-{name}")
        } else {
            format!("--tiledflow-{name}={value}")
        };
        s.push_str(&format!("  {flag:<36} {what}\n"));
    }
    s
}

/// The arguments of a compiler command that decide the speed of the code it generates
/// (`-O*`, `-m*`, `-f*`), for the programs that `--tiledflow-autotune` times: the ones that
/// make the compiler do something else than compile (`-fsyntax-only`), write files beside
/// (`-fprofile-*`, `-fdump-*`) or need libraries of their own (`-fsanitize=*`) are left out.
pub fn codegen_flags(args: &[String]) -> Vec<String> {
    const LEFT_OUT: [&str; 4] = ["-fsyntax-only", "-fprofile", "-fdump", "-fsanitize"];
    args.iter()
        .filter(|a| a.starts_with("-O") || a.starts_with("-m") || a.starts_with("-f"))
        .filter(|a| !LEFT_OUT.iter().any(|p| a.starts_with(p)))
        .cloned()
        .collect()
}

/// The runtime library a program links: `libstreamrt.a` for the CPU targets, `libstreamrt_gpu.a`
/// (streamrt with its GPU path, which alone carries CUDA code) for the cuda target.
pub fn runtime_library(cuda: bool) -> &'static str {
    if cuda {
        "libstreamrt_gpu.a"
    } else {
        "libstreamrt.a"
    }
}

/// The environment variable that names the runtime library instead of the search.
pub fn runtime_env(cuda: bool) -> &'static str {
    if cuda {
        "TILEDFLOW_GPU_RUNTIME"
    } else {
        "TILEDFLOW_RUNTIME"
    }
}

/// The streamrt library for linking ([`runtime_library`]): the file [`runtime_env`] names if
/// set, else the library next to the driver (the build tree, `target/<profile>/`) or in `../lib`
/// (an installation, `PREFIX/bin/` and `PREFIX/lib/`).
pub fn find_runtime(exe: &Path, cuda: bool) -> Result<PathBuf, String> {
    let (file, var) = (runtime_library(cuda), runtime_env(cuda));
    if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("{var}={}: no such file", p.display()))
        };
    }
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [dir.join(file), dir.join("../lib").join(file)];
    if let Some(found) = candidates.iter().find(|c| c.is_file()) {
        return Ok(found.clone());
    }
    let package = if cuda { "streamrt-gpu" } else { "streamrt" };
    Err(format!(
        "cannot find {file} next to {} or in ../lib (build it with `cargo build -p {package}`, \
         install with `make install`, or set {var})",
        exe.display()
    ))
}

/// Where the compiler writes the dependency file of a command with `-MD`/`-MMD`, as gcc and
/// clang choose it: `-MF FILE`; else `-o`'s name with the suffix `.d`; else, per source, its
/// base name with the suffix `.d` in the working directory. All candidates are returned;
/// [`fix_dependency_file`] only rewrites what names a temporary of ours.
pub fn dependency_files(cmd: &CcCommand) -> Vec<PathBuf> {
    if let Some(f) = &cmd.dependency_file {
        return vec![PathBuf::from(f)];
    }
    let mut files = Vec::new();
    if let Some(o) = &cmd.output {
        files.push(Path::new(o).with_extension("d"));
    }
    for &k in &cmd.sources {
        if let Some(name) = Path::new(&cmd.args[k]).file_name() {
            files.push(Path::new(name).with_extension("d"));
        }
    }
    files
}

/// A path as gcc and clang write it in a make rule: spaces and `#` escaped with `\`, `$` doubled.
pub fn make_escape(path: &str) -> String {
    let mut s = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            ' ' | '\t' | '#' => {
                s.push('\\');
                s.push(c);
            }
            '$' => s.push_str("$$"),
            _ => s.push(c),
        }
    }
    s
}

/// Rewrites a dependency file so that it names the user's sources instead of their transformed
/// copies: each `(temporary directory, user's directory)` pair of `renames` replaces the first by
/// the second (the file names are the same). Returns whether the file changed; a file that does
/// not exist is left alone.
pub fn fix_dependency_file(path: &Path, renames: &[(String, String)]) -> std::io::Result<bool> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let mut fixed = text.clone();
    for (tmp, user) in renames {
        fixed = fixed.replace(&make_escape(tmp), &make_escape(user));
    }
    if fixed == text {
        return Ok(false);
    }
    std::fs::write(path, fixed)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn sources_flags_and_linking_are_classified() {
        let c = parse(&v(
            "-O2 -I inc -DN=10 -std=c99 a.c -o prog b.o -lm --tiledflow-strict",
        ))
        .unwrap();
        assert_eq!(c.args, v("-O2 -I inc -DN=10 -std=c99 a.c -o prog b.o -lm"));
        // -O2, -I, inc, -DN=10, -std=c99, then a.c
        assert_eq!(c.sources, vec![5]);
        assert_eq!(c.parser_flags, v("-I inc -DN=10 -std=c99"));
        assert_eq!(c.output.as_deref(), Some("prog"));
        assert!(c.links());
        assert!(c.ours.strict);
    }

    #[test]
    fn every_cc_flag_of_a_typical_build_passes_through() {
        let line = "-c -g -O3 -march=native -Wall -Wextra -Werror=implicit -fPIC -fno-strict-aliasing \
                    -std=gnu11 -Iinc -isystem sys -iquote q -UNDEBUG -D X -DY=2 -include cfg.h -MD -MP -MT t.o \
                    -MQ $q -MF t.d -Wl,-O1 -L lib -Llib2 -l m -lz --param max-inline-insns-single=10 x.c -o t.o";
        let c = parse(&v(line)).unwrap();
        assert_eq!(c.args, v(line));
        assert_eq!(c.mode, Mode::Compile);
        assert!(!c.links());
        assert_eq!(c.sources.len(), 1);
        assert_eq!(c.args[c.sources[0]], "x.c");
        assert_eq!(
            c.parser_flags,
            v("-std=gnu11 -Iinc -isystem sys -iquote q -UNDEBUG -D X -DY=2 -include cfg.h")
        );
        assert!(c.writes_dependencies);
        assert_eq!(c.dependency_file.as_deref(), Some("t.d"));
        assert_eq!(dependency_files(&c), vec![PathBuf::from("t.d")]);
    }

    #[test]
    fn compile_only_does_not_link_and_output_is_not_a_source() {
        let c = parse(&v("-c x.c -o x.c.o")).unwrap();
        assert!(!c.links());
        assert_eq!(c.sources, vec![1]);
        let c = parse(&v("-c -o out.c y.c")).unwrap();
        assert_eq!(c.sources, vec![3]);
        let c = parse(&v("-S y.c")).unwrap();
        assert_eq!(c.mode, Mode::Compile);
    }

    #[test]
    fn several_sources_objects_and_libraries_in_one_link() {
        let c = parse(&v("a.c sub/b.c c.o libd.a -L. -ld -o prog")).unwrap();
        assert_eq!(c.sources, vec![0, 1]);
        assert!(c.links());
        assert_eq!(
            dependency_files(&c),
            vec![
                PathBuf::from("prog.d"),
                PathBuf::from("a.d"),
                PathBuf::from("b.d")
            ]
        );
    }

    #[test]
    fn commands_without_inputs_do_not_link() {
        for line in [
            "--version",
            "-v",
            "-dumpversion",
            "-print-search-dirs",
            "-O2 -o x",
        ] {
            let c = parse(&v(line)).unwrap();
            assert!(!c.links(), "{line}");
            assert!(c.sources.is_empty(), "{line}");
        }
        assert!(parse(&v("-lm")).unwrap().links());
    }

    #[test]
    fn preprocessing_and_dependency_only_commands_transform_nothing() {
        for line in [
            "-E a.c",
            "-M a.c",
            "-MM -MF a.d a.c",
            "-fsyntax-only a.c",
            "-E -x c -",
        ] {
            let c = parse(&v(line)).unwrap();
            assert_eq!(c.mode, Mode::Preprocess, "{line}");
            assert!(c.sources.is_empty(), "{line}");
            assert!(!c.links(), "{line}");
        }
        let c = parse(&v("-MMD -c a.c")).unwrap();
        assert_eq!(c.mode, Mode::Compile);
        assert!(c.writes_dependencies);
        assert_eq!(dependency_files(&c), vec![PathBuf::from("a.d")]);
    }

    #[test]
    fn languages_decide_what_is_c() {
        let c = parse(&v("-x c++ a.c -x c b.c -xc b.inc -x none d.c e.cpp")).unwrap();
        assert_eq!(c.sources, vec![5, 7, 10]);
        // Standard input is C only after `-x c`.
        let c = parse(&v("-x c -c - -o s.o")).unwrap();
        assert_eq!(c.sources, vec![3]);
        assert!(c.has_inputs);
        let c = parse(&v("-c -")).unwrap();
        assert!(c.sources.is_empty());
        let c = parse(&v("a.i b.s c.h")).unwrap();
        assert!(c.sources.is_empty());
    }

    #[test]
    fn tiledflow_options_are_ours_and_unknown_ones_are_errors() {
        let c = parse(&v("--tiledflow-target=seq --tiledflow-tile-sizes=8,16 --tiledflow-keep=out --tiledflow-verbose a.c"))
            .unwrap();
        assert_eq!(c.ours.target, Target::Seq);
        assert_eq!(c.ours.tile_sizes, Some(vec![8, 16]));
        assert_eq!(c.ours.keep, Some(PathBuf::from("out")));
        assert!(c.ours.verbose);
        assert_eq!(c.args, v("a.c"));
        assert_eq!(c.ours.fuse, None);
        let c = parse(&v("--tiledflow-fuse=min a.c")).unwrap();
        assert_eq!(
            c.ours.fuse,
            Some(crate::Fusion::Fixed(polyhedral::Plan::Heuristic(
                polyhedral::Fuse::Min
            )))
        );
        assert_eq!(
            parse(&v("--tiledflow-fuse=auto a.c")).unwrap().ours.fuse,
            Some(crate::Fusion::Auto)
        );
        assert!(parse(&v("--tiledflow-fuse=best a.c"))
            .unwrap_err()
            .contains("expected auto, min, smart, max, reuse, or blocks of statements"));
        assert_eq!(
            parse(&v("--tiledflow-fuse=S0+S1,S2 a.c"))
                .unwrap()
                .ours
                .fuse,
            Some(crate::Fusion::Fixed(polyhedral::Plan::Blocks(vec![
                vec![frontend::ir::StmtId(0), frontend::ir::StmtId(1)],
                vec![frontend::ir::StmtId(2)]
            ])))
        );
        let e = parse(&v("--tiledflow-bogus a.c")).unwrap_err();
        assert!(e.contains("unknown option --tiledflow-bogus"), "{e}");
        assert!(e.contains("--tiledflow-tile-sizes=N[,N...]"), "{e}");
        assert!(parse(&v("--tiledflow-target=gpu a.c"))
            .unwrap_err()
            .contains("expected one of tasks, seq"));
        assert!(parse(&v("--tiledflow-tile-sizes=0 a.c"))
            .unwrap_err()
            .contains("positive integers"));
        assert!(
            parse(&v("--tiledflow-no-line-shift a.c"))
                .unwrap()
                .ours
                .no_line_shift
        );
        assert!(!parse(&v("a.c")).unwrap().ours.no_line_shift);
        assert!(parse(&v("--tiledflow-no-line-shift=1 a.c")).is_err());
        assert!(
            parse(&v("--tiledflow-no-spread a.c"))
                .unwrap()
                .ours
                .no_spread
        );
        assert!(!parse(&v("a.c")).unwrap().ours.no_spread);
        assert!(
            parse(&v("--tiledflow-no-interleave a.c"))
                .unwrap()
                .ours
                .no_interleave
        );
        assert!(!parse(&v("a.c")).unwrap().ours.no_interleave);
        assert!(parse(&v("--tiledflow-strict=1 a.c"))
            .unwrap_err()
            .contains("takes no value"));
        assert!(parse(&v("--tiledflow-keep a.c"))
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse(&v("a.c -o"))
            .unwrap_err()
            .contains("missing argument after -o"));
    }

    #[test]
    fn response_files_are_expanded_like_gcc() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner.rsp");
        std::fs::write(&inner, "-DINNER").unwrap();
        let outer = dir.path().join("outer.rsp");
        let text = format!(
            "-I 'a dir' \"-DS=\\\"x y\\\"\"\n  b\\ c.c @{} ''\n",
            inner.display()
        );
        std::fs::write(&outer, text).unwrap();
        let argv = vec![
            "-c".to_string(),
            format!("@{}", outer.display()),
            "@missing.rsp".to_string(),
        ];
        assert_eq!(
            expand_response_files(&argv),
            vec![
                "-c",
                "-I",
                "a dir",
                "-DS=\"x y\"",
                "b c.c",
                "-DINNER",
                "",
                "@missing.rsp"
            ]
        );
    }

    #[test]
    fn help_lists_every_option() {
        let h = help_text();
        for (name, _, _) in TILEDFLOW_OPTIONS {
            assert!(h.contains(&format!("--tiledflow-{name}")), "{h}");
        }
    }

    #[test]
    fn dependency_files_name_the_users_sources() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("x.d");
        std::fs::write(
            &d,
            "x.o: /tmp/tf.A\\ b/0/my\\ file.c /usr/include/stdio.h \\\n inc/h.h\n",
        )
        .unwrap();
        let renames = vec![("/tmp/tf.A b/0/".to_string(), "src dir/".to_string())];
        assert!(fix_dependency_file(&d, &renames).unwrap());
        assert_eq!(
            std::fs::read_to_string(&d).unwrap(),
            "x.o: src\\ dir/my\\ file.c /usr/include/stdio.h \\\n inc/h.h\n"
        );
        // Nothing of ours in it: unchanged; a missing file: nothing to do.
        assert!(!fix_dependency_file(&d, &renames).unwrap());
        assert!(!fix_dependency_file(&dir.path().join("none.d"), &renames).unwrap());
        assert_eq!(make_escape("a b#$c"), "a\\ b\\#$$c");
    }
}
