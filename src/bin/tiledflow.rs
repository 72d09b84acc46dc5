//! `tiledflow`: the source-to-source compiler.
//!
//! Exit status: 0 on success, 1 when the input is at fault, 2 on an internal error (a SCoP the
//! compiler fails on is left as written with a warning instead, unless `--strict`). The output
//! file is written only on success (a temporary file, then a rename).

use clap::{Parser, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use tiledflow::{Emit, Error, Fusion, Options};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TargetArg {
    /// Every tile is a task on the streamrt dataflow runtime
    Tasks,
    /// Tiled code run in order on one thread
    Seq,
    /// Tiled code with OpenMP parallel tile loops and wavefronts (barriers; compile with -fopenmp)
    Omp,
    /// CUDA kernels in OUT.cu (beside OUT.c) run by streamrt's GPU launch graph when a GPU is
    /// there, the task version otherwise (TILEDFLOW_GPU=emulate runs the kernels on the CPU)
    Cuda,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum EmitArg {
    /// The static control parts: domains, schedules, accesses (ISL text)
    Scop,
    /// Flow, anti and output dependences
    Deps,
    /// The tiled schedule and its nests
    Schedule,
    /// Task classes and their input dependences
    Tasks,
    /// Tile domains, tile dependences, signatures and partitions
    Tiles,
    /// The task-class graph in Graphviz's dot language
    Dot,
    /// The cost model's estimate of each fusion candidate, nest by nest (with --fuse auto)
    Cost,
    /// The generated C program
    C,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum GranularityArg {
    Tile,
    Intraband,
    Interband,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ScopArg {
    /// The maximal affine loop nests of every function
    Auto,
    /// Only the regions between `#pragma scop` and `#pragma endscop`
    Pragma,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
enum DiagnosticsArg {
    /// `file:line:col: severity: message`, as compilers print them
    #[default]
    Text,
    /// One JSON object per line: file, line, column, severity, kind, message, and the construct,
    /// reason or stage where the kind has them (notes included, as with -v)
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ScheduleArg {
    /// The ISL scheduler (PLuTo-style: tiling and outer parallelism)
    Auto,
    /// The source order
    Original,
}

const EXAMPLES: &str = "\
Examples:
  tiledflow jacobi-2d.c -o jacobi-2d.tasks.c      dataflow tasks on streamrt
  tiledflow gemm.c --target seq -o -              tiled sequential C on stdout
  tiledflow gemm.c --emit deps -I utilities       print the dependences
  tiledflow gemm.c --tile-sizes 16,64 -o out.c    tile sizes per band dimension
  tiledflow gemm.c -v -o out.c                    one line per SCoP: statements, bands, tasks

Compile the output with `cc out.c libstreamrt.a -lpthread -ldl -lm` (the cuda target's with
libstreamrt_gpu.a instead), or use tiledflow-cc, which does all of this as a drop-in C compiler. Clang-style -I, -D, -U and -std= options are
passed to the parser.

Exit status: 0 on success, 1 when the input or the command line is at fault, 2 on an internal
error. The output file is written only on success.";

/// Compiles the affine loop nests of a C file into tiled dataflow task programs.
#[derive(Parser, Debug)]
#[command(name = "tiledflow", version, about, after_help = EXAMPLES)]
struct Cli {
    /// The C source file
    input: PathBuf,
    /// Output file (`-` for standard output); required when emitting C
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Code to generate
    #[arg(long, value_enum, default_value = "tasks")]
    target: TargetArg,
    /// Print an intermediate form instead of C (to standard output unless -o is given)
    #[arg(long, value_enum, default_value = "c")]
    emit: EmitArg,
    /// Tile sizes for the dimensions of each tiled band, outermost first (the last repeats);
    /// default: chosen per band from its depth, element sizes and footprint
    #[arg(long, value_delimiter = ',')]
    tile_sizes: Vec<i64>,
    /// Do not tile: each loop nest is one task
    #[arg(long)]
    no_tile: bool,
    /// Keep the order of every access to scalars written in a SCoP (temporaries are otherwise
    /// given a copy per task where their values never cross tasks, a scalar that stands for
    /// one array element from its load to its store is folded into the element, and an in-order
    /// sum into a scalar may move into the step of its loop before its own)
    #[arg(long)]
    no_privatize: bool,
    /// Keep each tile grid where the schedule puts it (by default, a nest that writes rows of
    /// whole cache lines has its tiles shifted at run time onto the lines of one of its arrays,
    /// so that tiles on different threads do not write the same line)
    #[arg(long)]
    no_line_shift: bool,
    /// Leave each task to the runtime's placement (by default, the tiles of a loop that is
    /// parallel are spread over the threads in one block per thread, as OpenMP's static schedule
    /// cuts a loop: neighbouring tiles run on one thread, apart from the other threads' tiles,
    /// and idle threads take tiles from other blocks)
    #[arg(long)]
    no_spread: bool,
    /// Spawn each nest's tiles after the previous nest's (by default, where a nest's tiles depend
    /// on the nest before it, each slab of the first nest's tiles along its outer tile loop is
    /// followed at once by the tiles of the next nests that it completes, so that they run
    /// while its data is in the cache: the tile loops fused, the tiles' code as it is)
    #[arg(long)]
    no_interleave: bool,
    /// Arrays of copies (a temporary kept per iteration of its outer loops, doitgen's `sum`) in
    /// blocks lent by tile row under the tasks target, each block's memory serving the next row
    /// once its tasks are done: auto (the default) for arrays of 1 MiB or more, always, or never
    #[arg(long, value_enum, default_value = "auto")]
    copy_blocks: CopyBlocksArg,
    /// Fusion: auto (the default) picks per SCoP the candidate the cost model estimates fastest
    /// on this machine (--emit cost shows them); min separates every strongly connected
    /// component of the dependence graph, smart is ISL's clustering, max fuses all it can, reuse
    /// is smart with statements that read the same read-only data scheduled to read it
    /// together; blocks of statements such as S0+S1,S2 (numbered as --emit scop shows them)
    /// fuse each block as a whole and run the blocks in that order
    #[arg(long, default_value = "auto", value_parser = parse_fusion)]
    fuse: Fusion,
    /// Choose each SCoP's fusion by timing its candidates on this machine instead of by the cost
    /// model: each candidate's code runs in a program of its own (the SCoP's arrays allocated at
    /// the sizes of --autotune-param), built with --autotune-cc. The winner is kept in the wisdom
    /// file (--wisdom), and a later build of the same SCoP on the same machine uses it at once.
    /// With --fuse auto and C output on the CPU targets
    #[arg(long)]
    autotune: bool,
    /// Parameter values to time the SCoPs at, e.g. `n=2000,m=2600` (default: the largest of
    /// 1000, 500, 250, ... that the arrays' declared sizes hold)
    #[arg(long, value_name = "NAME=VALUE", value_delimiter = ',', value_parser = tiledflow::autotune::parse_param)]
    autotune_param: Vec<(String, i64)>,
    /// Wall-clock seconds the timing of one SCoP's candidates may take, compiling included
    #[arg(long, value_name = "SECONDS", default_value_t = tiledflow::autotune::DEFAULT_BUDGET)]
    autotune_budget: u64,
    /// C compiler and flags of the timed programs (the streamrt library, -fopenmp and -lm are
    /// added as the target needs)
    #[arg(long, value_name = "COMMAND", default_value = tiledflow::autotune::DEFAULT_CC)]
    autotune_cc: String,
    /// The wisdom file of --autotune [default: $TILEDFLOW_WISDOM, else
    /// $XDG_CACHE_HOME/tiledflow/wisdom or ~/.cache/tiledflow/wisdom]
    #[arg(long, value_name = "FILE")]
    wisdom: Option<PathBuf>,
    /// Scheduler
    #[arg(long, value_enum, default_value = "auto")]
    schedule: ScheduleArg,
    /// Where the SCoPs are [default: `pragma` if the file has a `#pragma scop`, else `auto`].
    /// Under `auto`, nests that are not SCoPs stay as written (reasons shown with -v), and a nest
    /// writing through a pointer that may alias another of its arrays is refused unless one is
    /// `restrict`; under `pragma`, the pragma promises that arrays do not overlap
    #[arg(long, value_enum)]
    scop: Option<ScopArg>,
    /// Under `auto`, also transform the loop nests that carry a pragma of their own (OpenMP,
    /// `GCC ivdep`, `unroll`, any other), replacing the pragma with them (and the `#ifdef`
    /// lines around it that hold nothing else); by default such a nest stays as written
    #[arg(long)]
    replace_pragmas: bool,
    /// Emit #line directives pointing at the input file
    #[arg(long)]
    line_directives: bool,
    /// Fail when a SCoP cannot be transformed instead of leaving it as written
    #[arg(long)]
    strict: bool,
    /// CPU seconds one SCoP's compilation may take, on all the threads it uses; past them the
    /// SCoP is left as written with a warning (0: no limit)
    #[arg(long, value_name = "SECONDS", default_value_t = tiledflow::DEFAULT_SCOP_TIME_LIMIT)]
    scop_time_limit: u64,
    /// Print one line per SCoP on stderr: statements, bands, tile dependences, task classes, idioms, time
    #[arg(short, long)]
    verbose: bool,
    /// How diagnostics are printed on stderr
    #[arg(long, value_enum, default_value_t)]
    diagnostics: DiagnosticsArg,
    /// Print on stderr where the compile time went: per SCoP, the time of each stage
    /// (dependences, scheduling, privatization, verification, tile dependences, ...), and the
    /// time of parsing and printing the file
    #[arg(long)]
    time_stages: bool,
    /// What one task runs: one tile, or all tiles sharing the outermost tile coordinate
    /// (interband) or the two outermost (intraband)
    #[arg(long, value_enum, default_value = "tile")]
    granularity: GranularityArg,
    /// Preprocessor and language flags for the parser (-I, -D, -U, -std=, -include)
    #[arg(skip)]
    clang_args: Vec<String>,
}

/// Splits the C-compiler-style flags (which clap cannot express: `-std=c99`, `-DN=10`) from the rest.
fn split_cc_flags(args: Vec<String>) -> (Vec<String>, Vec<String>) {
    let mut ours = Vec::new();
    let mut cc = Vec::new();
    let mut it = args.into_iter();
    if let Some(argv0) = it.next() {
        ours.push(argv0);
    }
    while let Some(a) = it.next() {
        match tiledflow::cc::parser_flag_len(&a) {
            Some(n) => {
                cc.push(a);
                cc.extend(it.by_ref().take(n - 1));
            }
            None => ours.push(a),
        }
    }
    (ours, cc)
}

fn main() -> ExitCode {
    let (ours, cc) = split_cc_flags(std::env::args().collect());
    let mut cli = match Cli::try_parse_from(ours) {
        Ok(cli) => cli,
        // --help and --version print to stdout and succeed; a usage error is the user's (1).
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 1 } else { 0 });
        }
    };
    cli.clang_args = cc;
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::User(m)) => {
            eprintln!("tiledflow: error: {m}");
            ExitCode::from(1)
        }
        Err(e @ Error::Internal(_)) => {
            eprintln!("tiledflow: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> Result<(), Error> {
    let emit = match cli.emit {
        EmitArg::Scop => Emit::Scop,
        EmitArg::Deps => Emit::Deps,
        EmitArg::Schedule => Emit::Schedule,
        EmitArg::Tasks => Emit::Tasks,
        EmitArg::Tiles => Emit::Tiles,
        EmitArg::Dot => Emit::Dot,
        EmitArg::Cost => Emit::Cost,
        EmitArg::C => Emit::C,
    };
    if emit == Emit::C && cli.output.is_none() {
        return Err(Error::User(
            "no output file: give -o FILE (or -o - for standard output)".into(),
        ));
    }
    let cu_path = match (emit, cli.target, cli.output.as_deref()) {
        (Emit::C, TargetArg::Cuda, Some(p)) if p.as_os_str() == "-" => {
            return Err(Error::User(
                "--target cuda writes two files (OUT.c and the kernels OUT.cu): give -o FILE, not standard output".into(),
            ))
        }
        (Emit::C, TargetArg::Cuda, Some(p)) if p.extension().is_some_and(|e| e == "cu") => {
            return Err(Error::User(format!("--target cuda: the output {} would be overwritten by its kernels (.cu); name it .c", p.display())))
        }
        // `-o /dev/null` or a FIFO: the kernels would go to a new `null.cu` beside the device.
        (Emit::C, TargetArg::Cuda, Some(p)) if std::fs::metadata(p).is_ok_and(|m| !m.is_file()) => {
            return Err(Error::User(format!(
                "--target cuda writes its kernels to a file beside the output, but {} is not a regular file; give -o FILE.c",
                p.display()
            )))
        }
        (Emit::C, TargetArg::Cuda, Some(p)) => Some(p.with_extension("cu")),
        _ => None,
    };
    if cli.tile_sizes.iter().any(|&t| t < 1) {
        return Err(Error::User(
            "--tile-sizes: every size must be at least 1".into(),
        ));
    }
    let mut opts = Options {
        emit,
        target: match cli.target {
            TargetArg::Tasks => taskgen::Target::Tasks,
            TargetArg::Seq => taskgen::Target::Seq,
            TargetArg::Omp => taskgen::Target::Omp,
            TargetArg::Cuda => taskgen::Target::Cuda,
        },
        clang_args: cli.clang_args.clone(),
        line_directives: cli.line_directives,
        strict: cli.strict,
        scop_time_limit: tiledflow::scop_time_limit(cli.scop_time_limit),
        granularity: match cli.granularity {
            GranularityArg::Tile => taskgen::Granularity::Tile,
            GranularityArg::Intraband => taskgen::Granularity::Intraband,
            GranularityArg::Interband => taskgen::Granularity::Interband,
        },
        scop: match cli.scop {
            None => frontend::ScopMode::PragmaIfPresent,
            Some(ScopArg::Auto) => frontend::ScopMode::Auto,
            Some(ScopArg::Pragma) => frontend::ScopMode::Pragma,
        },
        replace_pragmas: cli.replace_pragmas,
        notes: cli.verbose || cli.diagnostics == DiagnosticsArg::Json,
        no_privatize: cli.no_privatize,
        no_line_shift: cli.no_line_shift,
        no_spread: cli.no_spread,
        no_interleave: cli.no_interleave,
        copy_blocks: match cli.copy_blocks {
            CopyBlocksArg::Auto => tiledflow::CopyBlocks::Auto,
            CopyBlocksArg::Always => tiledflow::CopyBlocks::Always,
            CopyBlocksArg::Never => tiledflow::CopyBlocks::Never,
        },
        ..Options::default()
    };
    opts.schedule.tile_sizes = if cli.no_tile {
        None
    } else {
        Some(cli.tile_sizes.clone())
    };
    opts.schedule.original = matches!(cli.schedule, ScheduleArg::Original);
    cli.fuse.apply(&mut opts);
    if cli.autotune {
        if !opts.fuse_by_cost {
            return Err(Error::User(
                "--autotune chooses each SCoP's fusion: it cannot be combined with --fuse min, smart or max".into(),
            ));
        }
        let exe = std::env::current_exe().unwrap_or_default();
        opts.autotune = Some(tiledflow::autotune::Autotune {
            cc: cli
                .autotune_cc
                .split_whitespace()
                .map(String::from)
                .collect(),
            params: cli.autotune_param.clone(),
            budget: std::time::Duration::from_secs(cli.autotune_budget),
            wisdom: cli
                .wisdom
                .clone()
                .or_else(tiledflow::autotune::default_wisdom),
            runtime: tiledflow::cc::find_runtime(&exe, false),
        });
    }
    let out = tiledflow::compile_file(&cli.input, &opts)?;
    for d in &out.diagnostics {
        match cli.diagnostics {
            DiagnosticsArg::Text => eprintln!("{d}"),
            DiagnosticsArg::Json => eprintln!("{}", d.json()),
        }
    }
    if cli.verbose {
        for r in &out.reports {
            eprintln!("{}", r.line(&cli.input.display().to_string()));
        }
    }
    if cli.time_stages {
        let path = cli.input.display().to_string();
        for r in &out.reports {
            eprintln!(
                "{path}: SCoP in {}() at line {}: {}",
                r.function,
                r.line,
                r.stages.line()
            );
        }
        eprintln!("{path}: {}", out.stages.line());
    }
    if let (Some(cu_path), Some(cu)) = (&cu_path, &out.cuda) {
        tiledflow::write_atomically(cu_path, cu)
            .map_err(|e| Error::User(format!("cannot write {}: {e}", cu_path.display())))?;
    }
    match cli.output.as_deref() {
        None => write_stdout(&out.text)?,
        Some(p) if p.as_os_str() == "-" => write_stdout(&out.text)?,
        Some(p) => tiledflow::write_atomically(p, &out.text)
            .map_err(|e| Error::User(format!("cannot write {}: {e}", p.display())))?,
    }
    Ok(())
}

/// Standard output as a C tool treats it: a reader that quit early (`| head`) is no error.
fn write_stdout(text: &str) -> Result<(), Error> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Error::User(format!("cannot write standard output: {e}")))
        }
        _ => Ok(()),
    }
}

/// `--copy-blocks`' value.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum CopyBlocksArg {
    Auto,
    Always,
    Never,
}

/// `--fuse`'s value.
fn parse_fusion(value: &str) -> std::result::Result<Fusion, String> {
    Fusion::parse(value).ok_or_else(|| format!("expected {}", tiledflow::FUSION_NAMES))
}
