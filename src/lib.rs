//! The tiledflow driver: runs the pipeline of the stage crates on one file.
//!
//! `frontend` → `polyhedral` (dependences, schedule, verify, tile dependences) → `taskgen`
//! (task program, C). Each stage's output can be printed instead of the C file (`Emit`), so that a
//! wrong result is traced to the first stage whose output is wrong.
//!
//! Failure policy: a SCoP that a later stage cannot handle is left as written with a warning and
//! the rest of the file is still transformed; that holds for the compiler's own failures too (an
//! ISL error, a schedule the verifier rejects, a panic), whose warning says it is a tiledflow
//! bug, since the SCoP as written still computes what it should. Under `strict` each of these is
//! an error and nothing is written. Errors say whether they are the user's ([`Error::User`]: bad
//! input, unsupported code under `strict`, exit status 1) or the compiler's
//! ([`Error::Internal`]: exit status 2).

pub mod autotune;
pub mod cc;
pub mod cc_cuda;
pub mod diagnostic;
pub mod text;

pub use diagnostic::{Cause, Diagnostic, Kind};

use frontend::ir::SourceFile;
use polyhedral::{Dependences, ScheduleConfig, TiledSchedule};
use std::path::Path;
use taskgen::{EmitOptions, ScopCode, Target, TaskProgram};

/// What to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Emit {
    Scop,
    Deps,
    Schedule,
    Tasks,
    Tiles,
    Dot,
    /// The cost model's estimate of each fusion candidate (`polyhedral::choose_fusion`).
    Cost,
    #[default]
    C,
}

/// Where the tasks target keeps an array of copies in blocks lent by tile row
/// (`polyhedral::copy_blocks`, streamrt's `tf_blocks_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CopyBlocks {
    /// Arrays of at least [`MIN_BLOCKED_COPIES`] bytes: a smaller one stays in the cache and
    /// gains nothing from blocks, whose tasks each ask for theirs.
    #[default]
    Auto,
    /// Every array of copies that can be.
    Always,
    /// None: one array each.
    Never,
}

/// The smallest array of copies [`CopyBlocks::Auto`] keeps in blocks: the L2 of the machines
/// measured. doitgen's 27 MB (LARGE) and 119 MB (EXTRALARGE) are in blocks; deriche's rows of
/// running values, 16 KB, are not.
pub const MIN_BLOCKED_COPIES: u64 = 1 << 20;

/// Options of one compilation.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub emit: Emit,
    pub target: Target,
    pub schedule: ScheduleConfig,
    /// `-I`, `-D`, `-U`, `-std=` and similar flags for parsing.
    pub clang_args: Vec<String>,
    /// `#line` directives in the output (for the C compiler's diagnostics).
    pub line_directives: bool,
    /// A SCoP that cannot be transformed is an error instead of a warning.
    pub strict: bool,
    /// How many tiles one task runs.
    pub granularity: taskgen::Granularity,
    /// Where the SCoPs are: `#pragma scop` regions or maximal affine loop nests.
    pub scop: frontend::ScopMode,
    /// Under auto mode, transform loop nests that carry the user's pragmas too, replacing the
    /// pragmas (`frontend::Options::replace_pragmas`).
    pub replace_pragmas: bool,
    /// Also report, as notes, the loop nests that `ScopMode::Auto` left as written and why.
    pub notes: bool,
    /// Keep every dependence through scalars written in a SCoP instead of giving each task its
    /// own copy where that is legal, or folding a scalar into the array element it stands for
    /// (see `compile_scop`).
    pub no_privatize: bool,
    /// Keep every tile grid where the schedule puts it instead of shifting it at run time onto
    /// the cache lines of an array the nest writes (`polyhedral::align`).
    pub no_line_shift: bool,
    /// Leave every task to the runtime's placement instead of spreading the tiles of a loop
    /// that is parallel over the threads in blocks, as OpenMP's static schedule does
    /// (`taskgen::TaskClass::spread`).
    pub no_spread: bool,
    /// Spawn each nest's tiles after the previous nest's instead of spawning the tiles of
    /// consecutive nests that depend on one another together (`polyhedral::spawn_groups`).
    pub no_interleave: bool,
    /// Which arrays of copies the tasks target keeps in blocks lent by tile row.
    pub copy_blocks: CopyBlocks,
    /// CPU time one SCoP's compilation may take, its threads' together (the fusion candidates',
    /// the scheduler's: `polyhedral::run_bounded`); past it the SCoP is left as written with a
    /// warning (`None`: no limit). A guard against the polyhedral operations whose cost grows
    /// without bound on some SCoPs, so that no build waits for minutes.
    pub scop_time_limit: Option<std::time::Duration>,
    /// Choose each SCoP's fusion heuristic by the cost model (`polyhedral::choose_fusion`) instead
    /// of using `schedule.fuse`. Not for the cuda target, whose schedules the model does not
    /// know, nor with `schedule.original` (the source order has no fusion to choose).
    pub fuse_by_cost: bool,
    /// With `fuse_by_cost`: time the candidates on this machine instead of trusting the
    /// estimates (`autotune`). Only for C output on the CPU targets.
    pub autotune: Option<autotune::Autotune>,
}

/// The default of `--scop-time-limit` (CPU seconds per SCoP): far above what any PolyBench
/// kernel takes (at most a few seconds), below what a build should wait.
pub const DEFAULT_SCOP_TIME_LIMIT: u64 = 60;

/// [`Options::scop_time_limit`] from a number of seconds (0: none).
pub fn scop_time_limit(seconds: u64) -> Option<std::time::Duration> {
    (seconds > 0).then(|| std::time::Duration::from_secs(seconds))
}

/// A failed compilation.
#[derive(Debug)]
pub enum Error {
    /// The input is at fault (syntax error, missing file, unsupported code under `strict`).
    User(String),
    /// The compiler is at fault.
    Internal(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::User(m) => write!(f, "{m}"),
            Error::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// One SCoP's trip through the pipeline, for `-v`.
#[derive(Clone, Debug)]
pub struct ScopReport {
    pub function: String,
    pub line: u32,
    pub n_statements: usize,
    /// Outermost loop nests of the final schedule (tiled bands).
    pub n_bands: usize,
    pub n_classes: usize,
    pub n_tile_deps: usize,
    /// The idiom chosen for each numbered tile dependence.
    pub idioms: Vec<taskgen::idiom::Idiom>,
    pub micros: u128,
    /// Where the time went, for `--time-stages`.
    pub stages: StageTimes,
    /// The fusion the cost model chose and every candidate it weighed (with `fuse_by_cost`).
    pub fusion: Option<FusionChoice>,
    /// What the tile code of each task class got beyond ISL's loops (full tiles apart,
    /// unroll-and-jam), by class name.
    pub tile_code: Vec<(String, polyhedral::TileCode)>,
    /// Scalars kept in arrays of copies (`polyhedral::materialize`), by name.
    pub materialized: Vec<String>,
    /// Webs of scalars folded into array elements (`polyhedral::fold_element_scalars`).
    pub folded: Vec<String>,
    /// Copies forwarded and reductions advanced (`polyhedral::retime_reductions`).
    pub retimed: Vec<String>,
    /// Nests whose tiles start on the cache lines of an array (`polyhedral::align`).
    pub row_lines: Vec<String>,
    /// Nests whose tiles are spawned in another order than their coordinates'
    /// (`polyhedral::Nest::spawn_order`), with that order.
    pub spawn_orders: Vec<String>,
    /// Runs of consecutive task classes whose tiles are spawned together
    /// (`taskgen::TaskProgram::spawn_groups`), for the tasks target, as `N0+N1+N2`.
    pub spawned_together: Vec<String>,
    /// Nests given smaller tiles for the threads (`polyhedral::spread_tiles`).
    pub spread: Vec<String>,
    /// Nests given larger tiles for the runtime's cost per task (`polyhedral::spread_tiles`).
    pub coarsened: Vec<String>,
    /// Nests whose members that ended in a partial tile are one tile (`polyhedral::spread_tiles`).
    pub fitted: Vec<String>,
    /// Task classes spread over the threads in blocks of a dimension (the first unless named)
    /// (`taskgen::TaskClass::spread`), for the targets that run tasks.
    pub blocks: Vec<String>,
    /// Task classes whose tiles are one partition with guarded inputs instead of a partition by
    /// signature (`taskgen::TaskClass::partitioned`: too many classes, or classes past
    /// `polyhedral::CLASSES_BUDGET`), for the targets that run tasks.
    pub guarded: Vec<String>,
}

/// The cost model's choice of fusion for one SCoP.
#[derive(Clone, Debug)]
pub struct FusionChoice {
    pub chosen: polyhedral::Plan,
    pub candidates: Vec<polyhedral::Candidate>,
    /// With `--autotune`: how the choice was made instead of by the estimates.
    pub tuned: Option<Tuned>,
}

/// How `--autotune` chose a SCoP's fusion.
#[derive(Clone, Debug)]
pub enum Tuned {
    /// Timed now: every candidate's timing.
    Measured(Vec<autotune::Timing>),
    /// Timed by an earlier build: the wisdom file's heuristic.
    Recalled,
}

impl Tuned {
    /// `min 0.41 s` or `max: stopped: slower than the best candidate`.
    fn timing(t: &autotune::Timing) -> String {
        match &t.seconds {
            Ok(s) if *s >= 1.0 => format!("{} {s:.2} s", t.plan),
            Ok(s) if *s >= 1e-3 => format!("{} {:.2} ms", t.plan, s * 1e3),
            Ok(s) => format!("{} {:.1} us", t.plan, s * 1e6),
            Err(why) => format!("{}: {why}", t.plan),
        }
    }
}

impl FusionChoice {
    /// `min (est. 1.2e-1 s; smart 4.1e0 s, max 3.9e0 s)`, for `-v`.
    pub fn summary(&self) -> String {
        let est = |c: &polyhedral::Candidate| match &c.cost {
            Ok(cost) => format!("{:.1e} s", cost.seconds),
            Err(_) => "no estimate".to_string(),
        };
        let chosen = self
            .candidates
            .iter()
            .find(|c| c.plan == self.chosen)
            .map(est)
            .unwrap_or_default();
        let others: Vec<String> = self
            .candidates
            .iter()
            .filter(|c| c.plan != self.chosen)
            .map(|c| format!("{} {}", c.plan, est(c)))
            .collect();
        let tuned = match &self.tuned {
            None => String::new(),
            Some(Tuned::Recalled) => ", autotuned by an earlier build (wisdom)".to_string(),
            Some(Tuned::Measured(timings)) => format!(
                ", autotuned: {}",
                timings
                    .iter()
                    .map(Tuned::timing)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        format!(
            "{} (est. {chosen}; {}{tuned})",
            self.chosen,
            others.join(", ")
        )
    }

    /// Every candidate's estimate, nest by nest, for `--emit cost`.
    pub fn text(&self) -> String {
        let mut out = format!("chosen: {}\n", self.chosen);
        for c in &self.candidates {
            match &c.cost {
                Ok(cost) => out.push_str(&format!("fuse {}: {cost}\n", c.plan)),
                Err(why) => out.push_str(&format!("fuse {}: no estimate: {why}\n", c.plan)),
            }
        }
        out
    }
}

/// How the fusion of a compilation is chosen (`--fuse`, `--tiledflow-fuse`, `TILEDFLOW_FUSE`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Fusion {
    /// By the cost model, per SCoP.
    #[default]
    Auto,
    /// The same plan for every SCoP: a heuristic, or blocks of statements (`S0+S1,S2`, statements
    /// as `--emit scop` numbers them), which every SCoP must then cover exactly.
    Fixed(polyhedral::Plan),
}

/// What [`Fusion::parse`] accepts, for messages.
pub const FUSION_NAMES: &str =
    "auto, min, smart, max, reuse, or blocks of statements such as S0+S1,S2";

impl Fusion {
    /// `auto`, `min`, `smart`, `max`, `reuse`, or blocks as `S0+S1,S2,S3`.
    pub fn parse(name: &str) -> Option<Fusion> {
        match name {
            "auto" => Some(Fusion::Auto),
            _ => polyhedral::Plan::parse(name).map(Fusion::Fixed),
        }
    }

    /// Sets `opts` to compile with this fusion.
    pub fn apply(&self, opts: &mut Options) {
        match self {
            Fusion::Auto => opts.fuse_by_cost = true,
            Fusion::Fixed(plan) => {
                opts.fuse_by_cost = false;
                let (fuse, blocks) = match plan {
                    polyhedral::Plan::Heuristic(fuse) => (*fuse, None),
                    polyhedral::Plan::Blocks(blocks) => {
                        (polyhedral::Fuse::Max, Some(blocks.clone()))
                    }
                };
                opts.schedule.fuse = fuse;
                opts.schedule.blocks = blocks;
            }
        }
    }
}

/// `min`, `smart`, `max`: the name of a fusion heuristic on the command line.
pub fn fuse_name(fuse: polyhedral::Fuse) -> &'static str {
    fuse.name()
}

/// Time spent per compilation stage, in the order the stages first ran; a stage that runs more
/// than once (privatization schedules again) is summed and counted.
#[derive(Clone, Debug, Default)]
pub struct StageTimes(
    Vec<(&'static str, u32, std::time::Duration)>,
    /// The stage that ran last (named in the warning when a SCoP fails).
    Option<&'static str>,
);

impl StageTimes {
    /// Runs `f` as stage `name`.
    pub fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        self.1 = Some(name);
        let r = f();
        self.add(name, start.elapsed());
        r
    }

    /// The stage that ran last.
    pub fn last(&self) -> Option<&'static str> {
        self.1
    }

    pub fn add(&mut self, name: &'static str, d: std::time::Duration) {
        match self.0.iter_mut().find(|s| s.0 == name) {
            Some(s) => {
                s.1 += 1;
                s.2 += d;
            }
            None => self.0.push((name, 1, d)),
        }
    }

    /// `deps 12.0 ms, schedule 2x 30.5 ms, ...`.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(name, n, d)| match n {
                1 => format!("{name} {:.1} ms", d.as_secs_f64() * 1e3),
                n => format!("{name} {n}x {:.1} ms", d.as_secs_f64() * 1e3),
            })
            .collect();
        parts.join(", ")
    }
}

impl ScopReport {
    /// `2 point-to-point, 1 soft-barrier`: how many dependences each idiom synchronizes, or `none`.
    fn idiom_counts(&self) -> String {
        use taskgen::idiom::Idiom;
        let kinds = [
            Idiom::PointToPoint,
            Idiom::Broadcast,
            Idiom::SoftBarrier,
            Idiom::Implied,
        ];
        let counts: Vec<String> = kinds
            .iter()
            .map(|k| (k, self.idioms.iter().filter(|i| *i == k).count()))
            .filter(|&(_, n)| n > 0)
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        if counts.is_empty() {
            "none".to_string()
        } else {
            counts.join(", ")
        }
    }

    /// The line `-v` prints: `path: SCoP in f() at line 12: 3 statements, 2 bands, ...`.
    pub fn line(&self, path: &str) -> String {
        let fusion = self
            .fusion
            .as_ref()
            .map_or(String::new(), |f| format!(", fusion: {}", f.summary()));
        let special: Vec<String> = self
            .tile_code
            .iter()
            .filter(|(_, code)| *code != polyhedral::TileCode::default())
            .map(|(name, code)| format!("{name} {code}"))
            .collect();
        let mut tile_code = if special.is_empty() {
            String::new()
        } else {
            format!(", tile code: {}", special.join("; "))
        };
        // What else was done, each list after its label (the lists of nests by `; `).
        let lists: [(&str, &[String], &str); 11] = [
            ("in arrays of copies", &self.materialized, ", "),
            ("scalars folded into elements", &self.folded, "; "),
            ("retimed", &self.retimed, "; "),
            (
                "one tile along loops that ended in a partial one",
                &self.fitted,
                "; ",
            ),
            ("smaller tiles for the threads", &self.spread, "; "),
            ("larger tiles for the cost per task", &self.coarsened, "; "),
            ("tiles shifted at run time", &self.row_lines, "; "),
            ("tiles spawned in the order", &self.spawn_orders, "; "),
            ("tiles spawned together", &self.spawned_together, "; "),
            (
                "tiles spread over the threads in blocks",
                &self.blocks,
                ", ",
            ),
            (
                "tiles not partitioned (inputs guarded)",
                &self.guarded,
                ", ",
            ),
        ];
        for (label, items, sep) in lists {
            if !items.is_empty() {
                tile_code.push_str(&format!(", {label}: {}", items.join(sep)));
            }
        }
        format!(
            "{path}: SCoP in {}() at line {}: {} statements, {} bands, {} tile dependences, {} task classes, idioms: {}{fusion}{tile_code}, {:.1} ms",
            self.function,
            self.line,
            self.n_statements,
            self.n_bands,
            self.n_tile_deps,
            self.n_classes,
            self.idiom_counts(),
            self.micros as f64 / 1000.0
        )
    }
}

/// The result of a compilation.
#[derive(Clone, Debug)]
pub struct Output {
    /// The requested text (C, or a printed intermediate form).
    pub text: String,
    /// Warnings and notes, typed ([`Diagnostic`]; `Display` gives `file:line:col: warning: ...`).
    pub diagnostics: Vec<Diagnostic>,
    pub reports: Vec<ScopReport>,
    /// With `--target cuda`: the text of the kernel file (`out.cu` beside `out.c`).
    pub cuda: Option<String>,
    /// The stages that run once per file (parsing, printing), for `--time-stages`.
    pub stages: StageTimes,
}

/// The stages' results for one SCoP, as far as the requested output needs them.
struct Compiled {
    deps: Dependences,
    sched: Option<TiledSchedule>,
    program: Option<TaskProgram>,
    /// The parallel tile loops, for the OpenMP target.
    omp: Option<taskgen::OmpPlan>,
    /// The scalars each task keeps in a variable of its own.
    private: Vec<taskgen::PrivateScalar>,
    /// For the CUDA target: whether and how the SCoP runs on the GPU.
    cuda: Option<taskgen::emit_cuda::CudaPlan>,
    fusion: Option<FusionChoice>,
    /// The scalars kept in arrays of copies, and the SCoP as the generated code sees it then
    /// (`polyhedral::with_materialized`); `None` when there are none.
    materialized: Vec<polyhedral::Materialized>,
    emit_scop: Option<frontend::ir::Scop>,
    /// The SCoP with its element scalars folded (`polyhedral::fold_element_scalars`), which
    /// every stage saw, and one line per folded web; `None` and empty when none was.
    scop: Option<frontend::ir::Scop>,
    folded: Vec<String>,
    /// What `polyhedral::retime_reductions` did, one line per rewrite.
    retimed: Vec<String>,
    /// What `polyhedral::spread_tiles` did, one line per halving.
    spread: Vec<String>,
    /// What `polyhedral::spread_tiles` doubled, one line per doubling.
    coarsened: Vec<String>,
    /// What `polyhedral::spread_tiles` fitted, one line per nest.
    fitted: Vec<String>,
}

impl Compiled {
    /// What `--emit deps` needs: the dependences alone.
    fn deps_only(deps: Dependences) -> Compiled {
        Compiled {
            deps,
            sched: None,
            program: None,
            omp: None,
            private: Vec::new(),
            cuda: None,
            fusion: None,
            materialized: Vec::new(),
            emit_scop: None,
            scop: None,
            folded: Vec::new(),
            retimed: Vec::new(),
            spread: Vec::new(),
            coarsened: Vec::new(),
            fitted: Vec::new(),
        }
    }
}

/// Debug builds only, for the tests of the failure policy: `TILEDFLOW_INJECT_FAULT=KIND:FUNCTION`
/// makes the SCoPs of FUNCTION fail as the compiler's bugs would (`panic` or `internal`), or
/// never finish (`spin`, for the time limit).
#[cfg(debug_assertions)]
fn inject_fault(function: &str) -> Result<(), Error> {
    let Ok(fault) = std::env::var("TILEDFLOW_INJECT_FAULT") else {
        return Ok(());
    };
    match fault.split_once(':') {
        Some(("panic", f)) if f == function => panic!("injected fault in {f}()"),
        Some(("internal", f)) if f == function => {
            Err(Error::Internal(format!("injected fault in {f}()")))
        }
        Some(("spin", f)) if f == function => loop {
            std::hint::spin_loop();
        },
        _ => Ok(()),
    }
}

#[cfg(not(debug_assertions))]
fn inject_fault(_function: &str) -> Result<(), Error> {
    Ok(())
}

/// The text of a caught panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    format!("panic: {text}")
}

/// A SCoP the polyhedral stage does not handle is the input's limit ([`Error::User`]); anything
/// else it reports is the compiler's fault.
fn polyhedral_error(e: polyhedral::Error) -> Error {
    match e {
        polyhedral::Error::Unsupported(m) => Error::User(format!("unsupported: {m}")),
        polyhedral::Error::Setting(m) => Error::User(m),
        polyhedral::Error::IllegalSchedule(m) => {
            Error::Internal(format!("the schedule violates dependences:\n{m}"))
        }
        other => Error::Internal(other.to_string()),
    }
}

/// The task builder's failures: a polyhedral analysis it ran fails as the polyhedral stage's
/// own do; an inconsistent task graph is a compiler bug.
fn taskgen_error(e: taskgen::Error) -> Error {
    match e {
        taskgen::Error::Polyhedral(e) => polyhedral_error(e),
        e @ taskgen::Error::InconsistentGraph(_) => Error::Internal(e.to_string()),
    }
}

/// How the frontend parses for `opts`: with the macros the statements use, which the CUDA
/// kernels and the autotuner's harnesses need (they compile statements outside the user's
/// file) and the vector lanes read (a macro that expands to its argument, PolyBench's
/// `SCALAR_VAL`, is its argument: `scop_ir::lanes`). Finding them cost no measurable time on
/// the PolyBench kernels (adi, gemm, jacobi-2d, covariance at LARGE: the same 0.18-0.80 s).
fn frontend_options(opts: &Options) -> frontend::Options {
    frontend::Options {
        clang_args: opts.clang_args.clone(),
        scop: opts.scop,
        replace_pragmas: opts.replace_pragmas,
        skip_macros: false,
    }
}

/// Compiles the file at `path`.
pub fn compile_file(path: &Path, opts: &Options) -> Result<Output, Error> {
    let fopts = frontend_options(opts);
    let mut stages = StageTimes::default();
    let (file, diags) = stages
        .time("parse", || frontend::parse_file(path, &fopts))
        .map_err(frontend_error)?;
    compile_parsed(file, frontend_diagnostics(&diags, opts), opts, stages)
}

/// Compiles source text given in memory (`path` names it in messages).
pub fn compile_source(path: &str, text: &str, opts: &Options) -> Result<Output, Error> {
    let fopts = frontend_options(opts);
    let mut stages = StageTimes::default();
    let (file, diags) = stages
        .time("parse", || frontend::parse_source(path, text, &fopts))
        .map_err(frontend_error)?;
    compile_parsed(file, frontend_diagnostics(&diags, opts), opts, stages)
}

/// The frontend's diagnostics; its notes only when asked for.
fn frontend_diagnostics(diags: &[frontend::Diagnostic], opts: &Options) -> Vec<Diagnostic> {
    diags
        .iter()
        .filter(|d| opts.notes || d.severity != frontend::Severity::Note)
        .map(Diagnostic::from_frontend)
        .collect()
}

fn frontend_error(e: frontend::Error) -> Error {
    match e {
        frontend::Error::Clang(m) => Error::Internal(m),
        other => Error::User(other.to_string()),
    }
}

fn compile_parsed(
    file: SourceFile,
    mut diagnostics: Vec<Diagnostic>,
    opts: &Options,
    mut stages: StageTimes,
) -> Result<Output, Error> {
    if opts.strict {
        if let Some(w) = diagnostics
            .iter()
            .find(|d| d.severity == diagnostic::Severity::Warning)
        {
            return Err(Error::User(w.to_string()));
        }
    }
    if file.scops.is_empty() {
        diagnostics.push(Diagnostic {
            severity: diagnostic::Severity::Note,
            file: file.path.clone(),
            loc: None,
            kind: Kind::NoScop,
        });
    }
    if opts.emit == Emit::Scop {
        let text = file
            .scops
            .iter()
            .map(text::scop)
            .collect::<Vec<_>>()
            .join("\n");
        return Ok(Output {
            text,
            diagnostics,
            reports: Vec::new(),
            cuda: None,
            stages,
        });
    }
    let mut compiled = Vec::new();
    let mut reports = Vec::new();
    for scop in &file.scops {
        let start = std::time::Instant::now();
        // A SCoP that fails in any way, a panic included, or that takes more than its time
        // limit, is left as written: the rest of the file is still transformed, and the SCoP as
        // written computes what it should. It is compiled on a thread of its own, which is left
        // behind if it is late (ISL cannot be interrupted).
        let (path, owned_scop, owned_opts) = (file.path.clone(), scop.clone(), opts.clone());
        let bounded = polyhedral::run_bounded("scop", opts.scop_time_limit, move || {
            let mut diags = Vec::new();
            let mut stages = StageTimes::default();
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                inject_fault(&owned_scop.function)?;
                compile_scop(&path, &owned_scop, &owned_opts, &mut diags, &mut stages)
            }))
            .unwrap_or_else(|panic| Err(Error::Internal(panic_message(&*panic))));
            (result, diags, stages)
        });
        let mut late = false;
        let (result, scop_diags, scop_stages) = match bounded {
            Ok(done) => done,
            Err(why) => {
                late = true;
                (
                    Err(Error::User(format!(
                        "compiling it {why} (the limit is --scop-time-limit)"
                    ))),
                    Vec::new(),
                    StageTimes::default(),
                )
            }
        };
        diagnostics.extend(scop_diags);
        match result {
            Ok(c) => {
                reports.push(ScopReport {
                    function: scop.function.clone(),
                    line: scop.loc.line,
                    n_statements: scop.statements.len(),
                    n_bands: c.sched.as_ref().map_or(0, |t| t.nests.len()),
                    n_classes: c.program.as_ref().map_or(0, |p| p.classes.len()),
                    n_tile_deps: c
                        .program
                        .as_ref()
                        .map_or(0, |p| p.classes.iter().map(|k| k.inputs.len()).sum()),
                    idioms: c.program.as_ref().map_or(Vec::new(), |p| p.idioms.clone()),
                    micros: start.elapsed().as_micros(),
                    stages: scop_stages,
                    fusion: c.fusion.clone(),
                    materialized: c
                        .materialized
                        .iter()
                        .map(|m| match &m.blocks {
                            Some(b) => format!(
                                "{} (in {} blocks of {} copies lent by tile row)",
                                m.scalar,
                                b.tasks.len(),
                                b.rows.saturating_mul(
                                    m.extents[1..m.extents.len() - m.own_rank]
                                        .iter()
                                        .map(|&e| e as i64)
                                        .product::<i64>()
                                )
                            ),
                            None => m.scalar.clone(),
                        })
                        .collect(),
                    folded: c.folded.clone(),
                    retimed: c.retimed.clone(),
                    spread: c.spread.clone(),
                    coarsened: c.coarsened.clone(),
                    fitted: c.fitted.clone(),
                    row_lines: c.program.as_ref().map_or(Vec::new(), |p| {
                        p.row_lines.iter().map(|l| l.to_string()).collect()
                    }),
                    spawn_orders: c.sched.as_ref().map_or(Vec::new(), |t| {
                        t.nests
                            .iter()
                            .enumerate()
                            .filter(|(_, n)| !n.spawn_order.is_empty())
                            .map(|(k, n)| {
                                let dims: Vec<String> =
                                    n.spawn_order.iter().map(|d| d.to_string()).collect();
                                format!("N{k} ({})", dims.join(", "))
                            })
                            .collect()
                    }),
                    spawned_together: match (&c.program, opts.target) {
                        (Some(p), Target::Tasks) => p
                            .spawn_groups
                            .iter()
                            .map(|g| {
                                let names: Vec<String> = g
                                    .members
                                    .clone()
                                    .zip(&g.orders)
                                    .map(|(k, order)| {
                                        let name = &p.classes[k].name;
                                        let own = c
                                            .sched
                                            .as_ref()
                                            .map_or(&[][..], |t| &t.nests[k].spawn_order[..]);
                                        if canonical_order(order) == canonical_order(own) {
                                            name.clone()
                                        } else {
                                            let dims: Vec<String> =
                                                order.iter().map(|d| d.to_string()).collect();
                                            format!("{name} in the order ({})", dims.join(", "))
                                        }
                                    })
                                    .collect();
                                names.join("+")
                            })
                            .collect(),
                        _ => Vec::new(),
                    },
                    blocks: match (&c.program, opts.target) {
                        (Some(p), Target::Tasks | Target::Cuda) => p
                            .classes
                            .iter()
                            .filter_map(|k| match k.spread? {
                                0 => Some(k.name.clone()),
                                dim => Some(format!("{} (dimension {dim})", k.name)),
                            })
                            .collect(),
                        _ => Vec::new(),
                    },
                    guarded: match (&c.program, opts.target) {
                        (Some(p), Target::Tasks | Target::Cuda) => p
                            .classes
                            .iter()
                            .filter(|k| !k.partitioned)
                            .map(|k| k.name.clone())
                            .collect(),
                        _ => Vec::new(),
                    },
                    tile_code: c.program.as_ref().map_or(Vec::new(), |p| {
                        p.classes
                            .iter()
                            .map(|k| (k.name.clone(), k.code.clone()))
                            .collect()
                    }),
                });
                // The later stages' statements are those of the SCoP with its scalars folded.
                let mut c = c;
                let seen = match c.scop.take() {
                    Some(folded) => std::borrow::Cow::Owned(folded),
                    None => std::borrow::Cow::Borrowed(scop),
                };
                compiled.push((seen, c));
            }
            Err(e) => {
                let (cause, why) = match &e {
                    Error::User(m) if late => (Cause::TimeLimit, m.clone()),
                    Error::User(m) => (Cause::Unsupported, m.clone()),
                    Error::Internal(m) => {
                        let stage = scop_stages.last().map(|st| st.to_string());
                        let shown = stage
                            .as_ref()
                            .map(|st| format!(" (stage `{st}`)"))
                            .unwrap_or_default();
                        (
                            Cause::Internal { stage },
                            format!(
                                "internal error{shown} (a tiledflow bug; please report it): {m}"
                            ),
                        )
                    }
                };
                let left = Diagnostic::at(
                    diagnostic::Severity::Warning,
                    &file.path,
                    scop.loc.line,
                    scop.loc.col,
                    Kind::ScopLeft { cause, why },
                );
                if opts.strict {
                    return Err(match e {
                        Error::User(_) => Error::User(left.to_string()),
                        Error::Internal(_) => Error::Internal(left.to_string()),
                    });
                }
                diagnostics.push(left);
            }
        }
    }
    let print_start = std::time::Instant::now();
    let text = match opts.emit {
        Emit::Scop => file.scops.iter().map(text::scop).collect::<Vec<_>>().join("\n"),
        Emit::Deps => compiled.iter().map(|(s, c)| text::deps(s, &c.deps)).collect::<Vec<_>>().join("\n"),
        Emit::Schedule => compiled
            .iter()
            .filter_map(|(s, c)| c.sched.as_ref().map(|t| text::schedule(s, t)))
            .collect::<Vec<_>>()
            .join("\n"),
        Emit::Tasks => compiled
            .iter()
            .filter_map(|(s, c)| c.program.as_ref().map(|p| text::tasks(s, p)))
            .collect::<Vec<_>>()
            .join("\n"),
        Emit::Tiles => compiled
            .iter()
            .filter_map(|(s, c)| c.program.as_ref().map(|p| text::tiles(s, p)))
            .collect::<Vec<_>>()
            .join("\n"),
        Emit::Cost => compiled
            .iter()
            .map(|(s, c)| match &c.fusion {
                Some(f) => format!("# SCoP in {}() at line {}\n{}", s.function, s.loc.line, f.text()),
                None => format!("# SCoP in {}() at line {}\nno estimate: the fusion is fixed (--fuse, --schedule original, or the cuda target)\n", s.function, s.loc.line),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Emit::Dot => compiled
            .iter()
            .filter_map(|(s, c)| c.program.as_ref().map(|p| taskgen::task_graph::to_dot(p, &format!("{}:{}", s.function, s.loc.line))))
            .collect::<Vec<_>>()
            .join("\n"),
        Emit::C => {
            let codes: Vec<ScopCode<'_>> = compiled
                .iter()
                .filter_map(|(scop, c)| scop_code(scop, c))
                .collect();
            let eo = EmitOptions { target: opts.target, line_directives: opts.line_directives };
            if opts.target == Target::Cuda {
                let plans: Vec<taskgen::emit_cuda::CudaPlan> = compiled
                    .iter()
                    .filter(|(_, c)| c.program.is_some())
                    .map(|(_, c)| c.cuda.clone().unwrap_or(taskgen::emit_cuda::CudaPlan { gpu: Err("no GPU plan".into()), not_thread_private: Vec::new() }))
                    .collect();
                let (c_text, cu) = taskgen::emit_cuda::emit(&file, &codes, &plans, &eo, "the .cu file beside this one");
                stages.add("print", print_start.elapsed());
                return Ok(Output { text: c_text, diagnostics, reports, cuda: Some(cu), stages });
            }
            taskgen::emit_file(&file, &codes, &eo)
        }
    };
    stages.add("print", print_start.elapsed());
    Ok(Output {
        text,
        diagnostics,
        reports,
        cuda: None,
        stages,
    })
}

fn compile_scop(
    path: &str,
    scop: &frontend::ir::Scop,
    opts: &Options,
    diagnostics: &mut Vec<Diagnostic>,
    st: &mut StageTimes,
) -> Result<Compiled, Error> {
    // Scalars that stand for an array element are folded into it first
    // (`polyhedral::fold_element_scalars`): every later stage, and the output, see the SCoP
    // with them folded.
    let folded = match opts.no_privatize {
        true => None,
        false => st
            .time("fold", || polyhedral::fold_element_scalars(scop))
            .map_err(polyhedral_error)?,
    };
    let (webs, scop) = match folded {
        Some(f) => (f.webs, std::borrow::Cow::Owned(f.scop)),
        None => (Vec::new(), std::borrow::Cow::Borrowed(scop)),
    };
    // Then an in-order reduction may move into the step before its own
    // (`polyhedral::retime_reductions`), which every later stage sees too. Not for the GPU:
    // the move serves a core's out-of-order execution (the update runs beside the chain), and a
    // GPU runs the chain in one thread either way.
    let retimed = match opts.no_privatize || opts.target == Target::Cuda {
        true => None,
        false => st
            .time("retime", || polyhedral::retime_reductions(&scop))
            .map_err(polyhedral_error)?,
    };
    let (notes, scop) = match retimed {
        Some(r) => (r.notes, std::borrow::Cow::Owned(r.scop)),
        None => (Vec::new(), scop),
    };
    let mut compiled = compile_folded(path, &scop, opts, diagnostics, st)?;
    compiled.folded = webs;
    compiled.retimed = notes;
    if let std::borrow::Cow::Owned(scop) = scop {
        compiled.scop = Some(scop);
    }
    Ok(compiled)
}

fn compile_folded(
    path: &str,
    scop: &frontend::ir::Scop,
    opts: &Options,
    diagnostics: &mut Vec<Diagnostic>,
    st: &mut StageTimes,
) -> Result<Compiled, Error> {
    let candidates = match opts.no_privatize {
        true => Vec::new(),
        false => st
            .time("candidates", || polyhedral::scalar_expansions(scop))
            .map_err(polyhedral_error)?,
    };
    if opts.emit == Emit::Deps && candidates.is_empty() {
        let deps = st
            .time("deps", || polyhedral::dependences(scop))
            .map_err(polyhedral_error)?;
        return Ok(Compiled::deps_only(deps));
    }
    // For the GPU (`taskgen::emit_cuda`): larger default tiles, parallel point loops outermost.
    let mut schedule_config = opts.schedule.clone();
    // Default tile sizes fit the tiles to this machine's L2 (`polyhedral::Machine::tile_footprint`).
    let machine = polyhedral::Machine::detect();
    schedule_config.tile_footprint = machine.tile_footprint();
    schedule_config.l2_bytes = machine.l2_bytes;
    // Products' tiles widened for their register kernels (`tile_size::widen_products`): CPU only.
    schedule_config.widen_products = opts.target != Target::Cuda;
    if opts.target == Target::Cuda {
        schedule_config.parallel_point_loops_outer = true;
        if schedule_config
            .tile_sizes
            .as_ref()
            .is_some_and(|t| t.is_empty())
        {
            schedule_config.tile_sizes = Some(vec![taskgen::emit_cuda::CUDA_TILE]);
            schedule_config.whole_carrying_members = true;
        }
    }
    // Scalar privatization (polyhedral's `privatize` module): schedule with the expandable
    // scalars expanded, keep those that one variable per task serves, and schedule again
    // without the others until all that are left are kept. The dependences of every later stage
    // (and of `--emit deps`) are those of the SCoP with the kept scalars expanded. Only the
    // schedule that is kept is verified: a discarded one never reaches code generation.
    // For the GPU, a private scalar must also be private to each thread (`taskgen::emit_cuda`);
    // one that is not is dropped as well, and shared on the device with its dependences kept.
    // The first pass cannot be skipped by deciding early which scalars will be dropped: whether
    // a scalar's values stay inside tasks depends on the tiled schedule (which loops are tiled,
    // and by how much), and that schedule depends on which scalars are expanded. Nor can the
    // second pass reuse the first one's schedule: with the dropped scalars' dependences back,
    // ISL schedules differently (deriche), even where the first schedule would respect them.
    // The answers of `task_private` per scalar: a scalar whose nests a later pass leaves as they
    // were is not analysed again.
    // The fusion heuristic, chosen by cost on the SCoP with every expandable scalar expanded (the
    // first pass below): its dependences serve that pass too.
    let mut first_deps = None;
    let mut fusion = None;
    if opts.fuse_by_cost
        && opts.target != Target::Cuda
        && opts.emit != Emit::Deps
        && !schedule_config.original
    {
        let expanded = polyhedral::expand_scalars(scop, &candidates).map_err(polyhedral_error)?;
        let deps = st
            .time("deps", || polyhedral::dependences(&expanded))
            .map_err(polyhedral_error)?;
        let machine = polyhedral::Machine::detect();
        // The scalars that no array of copies can hold must each stay in one variable per task
        // under the chosen schedule (the first pass below drops them otherwise).
        let mut unheld = Vec::new();
        for c in &candidates {
            if polyhedral::materialization(scop, c)
                .map_err(polyhedral_error)?
                .is_none()
            {
                unheld.push(c.clone());
            }
        }
        let (chosen, weighed) = st
            .time("fusion", || {
                polyhedral::choose_fusion(
                    &expanded,
                    &deps,
                    &schedule_config,
                    opts.granularity.tile_dims(),
                    &machine,
                    (scop, &unheld),
                )
            })
            .map_err(polyhedral_error)?;
        let plan = match &chosen.blocks {
            Some(blocks) => polyhedral::Plan::Blocks(blocks.clone()),
            None => polyhedral::Plan::Heuristic(chosen.fuse),
        };
        fusion = Some(FusionChoice {
            chosen: plan,
            candidates: weighed,
            tuned: None,
        });
        let widen_products = schedule_config.widen_products;
        let base = std::mem::replace(
            &mut schedule_config,
            ScheduleConfig {
                widen_products,
                ..chosen
            },
        );
        first_deps = Some((candidates.clone(), deps));
        if let (Some(tune), Emit::C) = (&opts.autotune, opts.emit) {
            let pass = Pass {
                candidates,
                schedule_config,
                first_deps,
                fusion,
            };
            return autotuned(path, scop, opts, tune, &base, pass, diagnostics, st);
        }
    }
    let pass = Pass {
        candidates,
        schedule_config,
        first_deps,
        fusion,
    };
    compile_pass(path, scop, opts, pass, diagnostics, st)
}

/// Where the stages after the fusion choice start: the scalars to try expanding, the schedule's
/// configuration, the dependences already computed for those scalars, and the choice's report.
#[derive(Clone)]
struct Pass {
    candidates: Vec<polyhedral::ScalarExpansion>,
    schedule_config: ScheduleConfig,
    first_deps: Option<(Vec<polyhedral::ScalarExpansion>, Dependences)>,
    fusion: Option<FusionChoice>,
}

/// The SCoP compiled under each fusion candidate that the model could schedule, each timed in a
/// harness of its own (`autotune`), and the fastest kept; or the heuristic that the wisdom file
/// remembers for it. Where no harness can be built or run, the model's choice (`model`) stands,
/// with a note saying why.
#[allow(clippy::too_many_arguments)]
fn autotuned(
    path: &str,
    scop: &frontend::ir::Scop,
    opts: &Options,
    tune: &autotune::Autotune,
    base: &ScheduleConfig,
    model: Pass,
    diagnostics: &mut Vec<Diagnostic>,
    st: &mut StageTimes,
) -> Result<Compiled, Error> {
    let Some(choice) = model.fusion.clone() else {
        return compile_pass(path, scop, opts, model, diagnostics, st);
    };
    let fallback = |why: String, diagnostics: &mut Vec<Diagnostic>| {
        diagnostics.push(Diagnostic::at(
            diagnostic::Severity::Note,
            path,
            scop.loc.line,
            scop.loc.col,
            Kind::Autotune(format!("the cost model's choice stands: {why}")),
        ));
    };
    let sizes = match polyhedral::run_sizes(scop, &tune.params) {
        Ok(sizes) => sizes,
        Err(e) => {
            fallback(format!("no sizes to time the SCoP at: {e}"), diagnostics);
            return compile_pass(path, scop, opts, model, diagnostics, st);
        }
    };
    let at: Vec<String> = sizes
        .params
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let key = autotune::key(&[
        &autotune::compiler_identity(),
        &text::scop(scop),
        &format!("{:?}", opts.target),
        &at.join(","),
        &tune.cc.join(" "),
        &autotune::machine(),
    ]);
    let with = |plan: &polyhedral::Plan, tuned: Tuned| Pass {
        schedule_config: plan.config(base),
        fusion: Some(FusionChoice {
            chosen: plan.clone(),
            tuned: Some(tuned),
            ..choice.clone()
        }),
        ..model.clone()
    };
    if let Some(plan) = tune
        .wisdom
        .as_deref()
        .and_then(|w| autotune::recall(w, &key))
    {
        return compile_pass(
            path,
            scop,
            opts,
            with(&plan, Tuned::Recalled),
            diagnostics,
            st,
        );
    }
    // The model's choice first, then by estimate: the first time bounds how long the others may
    // run, and a tie keeps the model's choice.
    let mut order: Vec<&polyhedral::Candidate> = choice
        .candidates
        .iter()
        .filter(|c| c.cost.is_ok())
        .collect();
    order.sort_by(|a, b| {
        let rank = |c: &polyhedral::Candidate| {
            let secs = c.cost.as_ref().map_or(f64::INFINITY, |c| c.seconds);
            (c.plan != choice.chosen, secs)
        };
        let (ra, rb) = (rank(a), rank(b));
        ra.0.cmp(&rb.0).then(ra.1.total_cmp(&rb.1))
    });
    let mut builds = Vec::new();
    for c in order {
        let mut diags = Vec::new();
        let pass = with(&c.plan, Tuned::Measured(Vec::new()));
        let compiled = compile_pass(path, scop, opts, pass, &mut diags, st)?;
        let text = scop_code(scop, &compiled).map(|code| {
            let eo = EmitOptions {
                target: opts.target,
                line_directives: false,
            };
            taskgen::harness::harness(&code, scop, &sizes, &eo)
        });
        builds.push((c.plan.clone(), compiled, text.unwrap_or_default(), diags));
    }
    let harnesses: Vec<(polyhedral::Plan, String)> = builds
        .iter()
        .map(|(p, _, t, _)| (p.clone(), t.clone()))
        .collect();
    let timings = st.time("autotune", || {
        autotune::measure(&harnesses, opts.target, tune)
    });
    let fastest = autotune::fastest(&timings, &choice.chosen);
    let shown: Vec<String> = timings.iter().map(Tuned::timing).collect();
    let Some((plan, _)) = fastest else {
        fallback(
            format!("no candidate could be timed ({})", shown.join("; ")),
            diagnostics,
        );
        return compile_pass(path, scop, opts, model, diagnostics, st);
    };
    if let Some(w) = &tune.wisdom {
        let sizes = match at.is_empty() {
            true => "no parameters".to_string(),
            false => at.join(","),
        };
        let note = format!(
            "{}() line {}, {sizes}: {}",
            scop.function,
            scop.loc.line,
            shown.join(", ")
        );
        if let Err(e) = autotune::remember(w, &key, &plan, &note) {
            diagnostics.push(Diagnostic::at(
                diagnostic::Severity::Warning,
                path,
                scop.loc.line,
                scop.loc.col,
                Kind::Autotune(format!("cannot keep the result in {}: {e}", w.display())),
            ));
        }
    }
    let Some((_, mut compiled, _, diags)) = builds.into_iter().find(|(p, ..)| *p == plan) else {
        return Err(Error::Internal(
            "the fastest candidate was not built".into(),
        ));
    };
    diagnostics.extend(diags);
    compiled.fusion = Some(FusionChoice {
        chosen: plan,
        tuned: Some(Tuned::Measured(timings)),
        ..choice
    });
    Ok(compiled)
}

/// The SCoP's code as the emitter takes it, when its task program was built.
fn scop_code<'a>(scop: &'a frontend::ir::Scop, c: &'a Compiled) -> Option<ScopCode<'a>> {
    let program = c.program.as_ref()?;
    Some(ScopCode {
        scop: c.emit_scop.as_ref().unwrap_or(scop),
        program,
        omp: c.omp.as_ref(),
        private: &c.private,
        cuda: None,
        materialized: &c.materialized,
    })
}

/// The stages from scheduling to the task program, from `pass`; then, where a nest would follow
/// the cache lines of an array it updates in place (`polyhedral::align`) and its register
/// kernels could stay, again with those nests' tile grids shifted, kept only if every class
/// has the same kernels. A shifted grid makes the trip counts of the tiles partial along it
/// depend on the shift, and the kernels of those tiles (lu's diagonal, cholesky's at small
/// sizes where one code serves every tile) need constant ones. A second pass that fails leaves
/// the first's result.
fn compile_pass(
    path: &str,
    scop: &frontend::ir::Scop,
    opts: &Options,
    pass: Pass,
    diagnostics: &mut Vec<Diagnostic>,
    st: &mut StageTimes,
) -> Result<Compiled, Error> {
    let mut first_diagnostics = Vec::new();
    let mut lines = Vec::new();
    let shifts = opts.target != Target::Cuda && !opts.no_line_shift;
    // `--emit schedule` stops before the tile code, which decides; it gets the schedule that
    // the C would have.
    let full;
    let opts = match (shifts, opts.emit) {
        (true, Emit::Schedule) => {
            full = Options {
                emit: Emit::C,
                ..opts.clone()
            };
            &full
        }
        _ => opts,
    };
    let ask = shifts.then_some(&mut lines);
    // The tile sizes the spread search settles on do not depend on the tile grids' shifts (set
    // after it): the shifted pass takes the first one's (gramschmidt's search, 0.23 s at LARGE,
    // ran twice).
    let mut spread = None;
    let first = compile_stages(
        path,
        scop,
        opts,
        pass.clone(),
        &mut first_diagnostics,
        st,
        &[],
        ask,
        &mut spread,
    )?;
    if !lines.is_empty() {
        let mut shifted_diagnostics = Vec::new();
        if let Ok(shifted) = compile_stages(
            path,
            scop,
            opts,
            pass,
            &mut shifted_diagnostics,
            st,
            &lines,
            None,
            &mut spread,
        ) {
            if same_kernels(&first, &shifted) {
                diagnostics.extend(shifted_diagnostics);
                return Ok(shifted);
            }
        }
    }
    diagnostics.extend(first_diagnostics);
    Ok(first)
}

/// Whether every task class of `b` runs the register kernels of `a`'s, in the same tiles.
fn same_kernels(a: &Compiled, b: &Compiled) -> bool {
    type Kernels<'a> = (&'a [String], &'a [String], &'a [String]);
    fn kernels(c: &Compiled) -> Vec<Kernels<'_>> {
        c.program.as_ref().map_or(Vec::new(), |p| {
            p.classes
                .iter()
                .map(|k| (&k.code.kernels[..], &k.code.relaxed[..], &k.code.alone[..]))
                .collect()
        })
    }
    kernels(a) == kernels(b)
}

/// [`compile_pass`]'s stages once: the nests `align` (by their statements) have their tile grids
/// on an array's lines where they can; `lines`, when given, receives the nests that could and
/// whose kernels could stay (none, or only in full tiles and in tiles partial along other
/// loops). `searched` holds what the spread search found (the configuration it leaves and the
/// spreads it kept, or `None` for none), once a pass ran it: a later pass of the same [`Pass`]
/// takes it instead of searching again.
#[allow(clippy::too_many_arguments)]
fn compile_stages(
    path: &str,
    scop: &frontend::ir::Scop,
    opts: &Options,
    pass: Pass,
    diagnostics: &mut Vec<Diagnostic>,
    st: &mut StageTimes,
    align: &[Vec<frontend::ir::StmtId>],
    mut lines: Option<&mut Vec<Vec<frontend::ir::StmtId>>>,
    searched: &mut Option<Option<(ScheduleConfig, Vec<polyhedral::Spread>)>>,
) -> Result<Compiled, Error> {
    let Pass {
        mut candidates,
        mut schedule_config,
        mut first_deps,
        fusion,
    } = pass;
    let mut known_private = polyhedral::KnownPrivate::default();
    // Smaller tiles where the tile graph leaves the threads waiting (`polyhedral::spread_tiles`),
    // looked for once, on the SCoP with every candidate scalar expanded.
    let mut spread: Option<Vec<polyhedral::Spread>> = None;
    loop {
        let (expanded, deps, fine, sched, private, materialized, warnings) = loop {
            let expanded =
                polyhedral::expand_scalars(scop, &candidates).map_err(polyhedral_error)?;
            let deps = match first_deps.take() {
                Some((expanded_with, deps)) if expanded_with == candidates => deps,
                _ => st
                    .time("deps", || polyhedral::dependences(&expanded))
                    .map_err(polyhedral_error)?,
            };
            if spread.is_none() {
                let found = match (opts.emit, &searched) {
                    (Emit::Deps, _) => None,
                    (_, Some(found)) => found.clone(),
                    _ => st
                        .time("spread", || {
                            polyhedral::spread_tiles(
                                &expanded,
                                &deps,
                                &schedule_config,
                                opts.granularity.tile_dims(),
                                &polyhedral::Machine::detect(),
                            )
                        })
                        .map_err(polyhedral_error)?,
                };
                *searched = Some(found.clone());
                spread = Some(match found {
                    Some((config, kept)) => {
                        schedule_config = config;
                        kept
                    }
                    None => Vec::new(),
                });
                // Tile grids on the cache lines of the arrays updated in place
                // (`polyhedral::align`), once the tile sizes are settled.
                schedule_config.align_nests = align.to_vec();
            }
            let (fine, warnings) = st
                .time("schedule", || {
                    polyhedral::schedule(&expanded, &deps, &schedule_config)
                })
                .map_err(polyhedral_error)?;
            let sched = match opts.granularity.tile_dims() {
                Some(n) => polyhedral::coarsen(&fine, n).map_err(polyhedral_error)?,
                None => fine.clone(),
            };
            let private = st
                .time("privatize", || {
                    polyhedral::task_private_reusing(scop, &candidates, &sched, &mut known_private)
                })
                .map_err(polyhedral_error)?;
            // A scalar that one variable per task cannot serve keeps its expansion in an array
            // of copies where it can (`polyhedral::materialize`; not on the GPU), so the
            // schedule found with it expanded stands; otherwise its dependences come back.
            let mut materialized = Vec::new();
            if opts.target != Target::Cuda {
                for c in candidates
                    .iter()
                    .filter(|c| !private.iter().any(|p| p.array == c.array))
                {
                    if let Some(m) = st
                        .time("privatize", || polyhedral::materialization(scop, c))
                        .map_err(polyhedral_error)?
                    {
                        materialized.push(m);
                    }
                }
            }
            if private.len() + materialized.len() == candidates.len() {
                st.time("verify", || polyhedral::verify(&expanded, &deps, &fine))
                    .map_err(polyhedral_error)?;
                if opts.granularity.tile_dims().is_some() {
                    // Code is generated from the coarsened schedule: it is checked too.
                    st.time("verify", || polyhedral::verify(&expanded, &deps, &sched))
                        .map_err(polyhedral_error)?;
                }
                break (expanded, deps, fine, sched, private, materialized, warnings);
            }
            candidates.retain(|c| {
                private.iter().any(|p| p.array == c.array)
                    || materialized.iter().any(|m| m.array == c.array)
            });
        };
        // The tasks target keeps arrays of copies in blocks lent by tile row where each row's
        // tasks touch only its copies (`polyhedral::copy_blocks`, streamrt's `tf_blocks_*`).
        let mut materialized = materialized;
        if opts.target == Target::Tasks {
            for m in materialized.iter_mut().filter(|m| match opts.copy_blocks {
                CopyBlocks::Auto => m.bytes() >= MIN_BLOCKED_COPIES,
                CopyBlocks::Always => true,
                CopyBlocks::Never => false,
            }) {
                m.blocks = st
                    .time("copy blocks", || {
                        polyhedral::copy_blocks(&expanded, &sched, m)
                    })
                    .map_err(polyhedral_error)?;
            }
        }
        if opts.emit == Emit::Deps {
            return Ok(Compiled::deps_only(deps));
        }
        if opts.emit == Emit::Schedule {
            return Ok(Compiled {
                deps,
                sched: Some(fine),
                program: None,
                omp: None,
                private: Vec::new(),
                cuda: None,
                fusion,
                materialized: Vec::new(),
                emit_scop: None,
                scop: None,
                folded: Vec::new(),
                retimed: Vec::new(),
                spread: Vec::new(),
                coarsened: Vec::new(),
                fitted: Vec::new(),
            });
        }
        let tile_deps = st
            .time("tile deps", || {
                polyhedral::tile_dependences(&expanded, &deps, &sched)
            })
            .map_err(polyhedral_error)?;
        let private_ids: Vec<frontend::ir::ArrayId> = private.iter().map(|p| p.array).collect();
        // The tile code reads statements' text as it is emitted: with the arrays of copies'
        // subscripts (the vector kernels' lanes look at every subscript of an occurrence).
        let coded = (!materialized.is_empty())
            .then(|| polyhedral::with_materialized(&expanded, &materialized));
        let mut program = st
            .time("tasks", || {
                // The CUDA target maps the loops of ISL's plain tile code to threads.
                let bodies = if opts.target == Target::Cuda {
                    taskgen::TileBodies::Plain
                } else {
                    taskgen::TileBodies::Cpu(&private_ids)
                };
                taskgen::build(
                    coded.as_ref().unwrap_or(&expanded),
                    &deps,
                    &sched,
                    &tile_deps,
                    bodies,
                )
            })
            .map_err(taskgen_error)?;
        if opts.no_spread {
            for class in &mut program.classes {
                class.spread = None;
            }
        }
        if opts.no_interleave {
            program.spawn_groups.clear();
        }
        if let Some(lines) = lines.as_deref_mut() {
            lines.clear();
            let along = polyhedral::follows_lines(&expanded, &deps, &sched.nests)
                .map_err(polyhedral_error)?;
            for ((nest, class), dim) in sched.nests.iter().zip(&program.classes).zip(along) {
                // Kernels that may stay: none, or only in full tiles and in tiles partial along
                // other loops (the shift makes the trip counts along its loop vary), and none in
                // tiles that one statement alone fills (a shifted grid cuts them for every
                // shift but 0: cholesky's update, whose second pass, 0.7 s at LARGE, was always
                // discarded).
                let Some(dim) = dim else { continue };
                let code = &class.code;
                let along_shift = format!("tf_i{dim}");
                if code.kernels.is_empty()
                    || (code.full_tiles
                        && !code.relaxed.contains(&along_shift)
                        && code.alone.is_empty())
                {
                    lines.push(nest.statements.clone());
                }
            }
        }
        let omp = match (opts.emit, opts.target) {
            (Emit::C, Target::Omp) => Some(
                st.time("omp plan", || {
                    taskgen::emit_omp::plan(&expanded, &deps, &sched)
                })
                .map_err(taskgen_error)?,
            ),
            _ => None,
        };
        let private = taskgen::private_scalars(scop, &private).map_err(taskgen_error)?;
        let cuda = match (opts.emit, opts.target) {
            (Emit::C, Target::Cuda) => {
                let plan = st
                    .time("gpu plan", || {
                        taskgen::emit_cuda::plan(scop, &expanded, &deps, &sched, &program, &private)
                    })
                    .map_err(taskgen_error)?;
                if !plan.not_thread_private.is_empty() {
                    candidates.retain(|c| !plan.not_thread_private.contains(&c.array));
                    continue;
                }
                if let (Err(why), true) = (&plan.gpu, opts.notes) {
                    diagnostics.push(Diagnostic::at(
                        diagnostic::Severity::Note,
                        path,
                        scop.loc.line,
                        scop.loc.col,
                        Kind::StaysOnCpu(why.to_string()),
                    ));
                }
                Some(plan)
            }
            _ => None,
        };
        for w in warnings {
            diagnostics.push(Diagnostic::at(
                diagnostic::Severity::Warning,
                path,
                scop.loc.line,
                scop.loc.col,
                Kind::Polyhedral(w.0.to_string()),
            ));
        }
        // What `polyhedral::spread_tiles` did of one kind, one line per change, as `-v` prints it.
        let spread_of = |kind: polyhedral::SpreadKind| -> Vec<String> {
            spread
                .iter()
                .flatten()
                .filter(|s| s.kind == kind)
                .map(polyhedral::Spread::to_string)
                .collect()
        };
        return Ok(Compiled {
            deps,
            sched: Some(sched),
            program: Some(program),
            omp,
            private,
            cuda,
            fusion,
            emit_scop: (!materialized.is_empty())
                .then(|| polyhedral::with_materialized(scop, &materialized)),
            materialized,
            scop: None,
            folded: Vec::new(),
            retimed: Vec::new(),
            fitted: spread_of(polyhedral::SpreadKind::Fit),
            spread: spread_of(polyhedral::SpreadKind::Halved),
            coarsened: spread_of(polyhedral::SpreadKind::Doubled),
        });
    }
}

/// A spawn order with the identity as the empty one: two orders of one nest are the same when
/// these are.
fn canonical_order(order: &[usize]) -> &[usize] {
    if order.iter().enumerate().all(|(k, &d)| k == d) {
        &[]
    } else {
        order
    }
}

/// Writes `text` to `path` atomically: a temporary file in the same directory, then a rename, so
/// that a failed or interrupted run never leaves a partial file.
///
/// Only a regular file is replaced that way. A symbolic link is followed, so the file it names is
/// replaced and the link stays; anything else that exists (`/dev/null`, a FIFO, a terminal) is
/// opened and written as it is, since renaming over it would put a regular file in its place.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() && !meta.is_dir() {
            return std::fs::OpenOptions::new()
                .write(true)
                .open(path)?
                .write_all(text.as_bytes());
        }
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        if let Ok(target) = std::fs::canonicalize(path) {
            return write_atomically(&target, text);
        }
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tiledflow.").suffix(".tmp");
    // The file a plain `open` would make (0666 less the umask), not tempfile's private 0600.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    // tempfile adds the temporary's name to its errors: the user knows only `path`.
    let plain = |e: std::io::Error| {
        e.raw_os_error()
            .map_or(e, std::io::Error::from_raw_os_error)
    };
    let mut tmp = builder.tempfile_in(dir).map_err(plain)?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(path).map_err(|e| plain(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::write_atomically;
    use std::io::Read;

    #[test]
    fn a_regular_file_is_replaced_and_a_link_is_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.c");
        write_atomically(&file, "one\n").unwrap();
        write_atomically(&file, "two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "two\n");

        let link = dir.path().join("link.c");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        write_atomically(&link, "three\n").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "three\n");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 2, "no temporary is left behind: {left:?}");
    }

    #[test]
    fn a_fifo_is_written_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                std::fs::File::open(&fifo)
                    .unwrap()
                    .read_to_string(&mut text)
                    .unwrap();
                text
            })
        };
        write_atomically(&fifo, "through the pipe\n").unwrap();
        // Checked first: had the FIFO been replaced, the reader would wait forever.
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), "through the pipe\n");
    }
}
