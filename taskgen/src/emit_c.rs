//! C code for task programs: the output file is the input file with each SCoP region replaced by
//! its control program and, before the SCoP's function, the task bodies.
//!
//! How task bodies reach the kernel's variables (they run on other threads, outside the kernel's
//! stack frame): an environment struct per SCoP, filled in the kernel and passed to every task.
//! - arrays declared in the function (parameters, locals) are captured as `void *` plus their inner
//!   dimensions, measured with `sizeof` where the kernel declares them (which works alike for fixed
//!   sizes, C99 VLA parameters and pointers to arrays); the task re-declares them as pointers to
//!   arrays of those dimensions. Pointer-to-pointer "arrays" have no such dimensions: a static
//!   assertion stops their compilation rather than letting the cast be wrong. Where the declared
//!   type gives an inner dimension as a constant ([`Array::extents`]), the task uses the constant,
//!   and a static assertion checks it where the kernel declares the array: with strides known,
//!   the C compiler can tell rows of one array apart and vectorizes the point loops. The task
//!   function passes the arrays to its body as `restrict`-qualified parameters;
//! - scalars written by the SCoP are captured by address and statements use `(*name)`, except
//!   the scalars private to each task ([`crate::private`]): the task function declares its own
//!   `name`, which the statements use, and the task of the tile running the last write copies
//!   it back through the address at its end (a private scalar at file scope is hidden the same
//!   way by a local of the task function);
//! - scalars only read (parameters, coefficients) are captured by value;
//! - variables at file scope are named directly.
//!
//! Generated identifiers start with `tf_`, which the frontend refuses in user code of SCoPs.

use crate::c_ast::{self, HELPERS};
use crate::private::PrivateScalar;
use crate::program::{
    names, Barrier, InputKind, TaskClass, TaskProgram, DST_NAME, KEY_NAME, TILE_ITER,
};
use polyhedral::{Ast, Expr};
use polyhedral::{KernelPart, RowWhat, StepWhat};
use scop_ir::{Array, ArrayId, BodyPiece, Scop, SourceFile, Storage};
use std::fmt::Write;

/// Around the task functions: GCC's warnings about loop trip counts derived from array bounds
/// are off (see `emit_file_with`).
const GCC_QUIET_BEGIN: &str = "#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored \"-Waggressive-loop-optimizations\"
#endif
";
const GCC_QUIET_END: &str = "#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
";

/// The C header of streamrt, copied into every generated file that uses the runtime so that the
/// output compiles with no include path; the runtime library is still needed to link.
pub const STREAMRT_H: &str = include_str!("../../streamrt/include/streamrt.h");

/// Starts streamrt's threads before `main` (a constructor, once per file; later calls do
/// nothing), so that the first SCoP does not pay for their start: measured on bicg at MEDIUM with
/// 2 threads, the kernel took 0.37 ms with the start inside it and 0.20 ms without.
const RUNTIME_START: &str = "__attribute__((constructor)) static void tf_runtime_start_early(void) { tf_runtime_start(); }\n";

/// What the control program does with the tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Target {
    /// Every tile is a task on streamrt, synchronized point to point.
    #[default]
    Tasks,
    /// Tiles run in order on the calling thread (no runtime).
    Seq,
    /// Parallel tile loops and wavefronts with OpenMP barriers (see [`crate::emit_omp`]).
    Omp,
    /// Tasks too, and each SCoP that can also as launches of CUDA kernels on streamrt's GPU
    /// launch graph, chosen at run time (see [`crate::emit_cuda`]).
    Cuda,
}

/// Options of C emission.
#[derive(Clone, Debug, Default)]
pub struct EmitOptions {
    pub target: Target,
    /// Emit `#line` directives so that diagnostics of the C compiler point at the user's file.
    pub line_directives: bool,
}

/// One SCoP with its task program, ready to emit.
pub struct ScopCode<'a> {
    pub scop: &'a Scop,
    pub program: &'a TaskProgram,
    /// The parallel tile loops, for [`Target::Omp`] (built by [`crate::emit_omp::plan`]).
    pub omp: Option<&'a crate::emit_omp::OmpPlan>,
    /// The scalars each task keeps in a variable of its own.
    pub private: &'a [PrivateScalar],
    /// For [`Target::Cuda`]: whether and how the SCoP runs on the GPU.
    pub cuda: Option<&'a CudaScop>,
    /// Scalars kept in arrays of copies (`scop` already names the arrays): allocated before the
    /// SCoP runs, the last value copied to the scalar and the array freed after.
    pub materialized: &'a [polyhedral::Materialized],
}

/// The GPU side of one SCoP as the control program runs it: text that [`crate::emit_cuda`]
/// writes and this emitter places (it links no knowledge of the kernels).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CudaScop {
    /// The GPU control program (inside `if (tf_gpu_mod) { ... }`), or `None` (CPU only).
    pub host: Option<String>,
    /// Why the SCoP is not on the GPU.
    pub note: Option<String>,
}

/// Writes the output file: `file.text` with every SCoP of `scops` (in source order) replaced.
pub fn emit_file(file: &SourceFile, scops: &[ScopCode<'_>], opts: &EmitOptions) -> String {
    emit_file_with(file, scops, opts, None)
}

/// [`emit_file`], with `prelude` (file-scope C) after the helpers.
pub(crate) fn emit_file_with(
    file: &SourceFile,
    scops: &[ScopCode<'_>],
    opts: &EmitOptions,
    prelude: Option<&str>,
) -> String {
    let text = &file.text;
    // With `#line` directives, each statement in a task body is marked with its own source line,
    // so that the C compiler's warnings about the user's statements point at them.
    let line_file = opts.line_directives.then(|| c_string(&file.path));
    let mut out = String::with_capacity(text.len() * 2);
    let mut pos = 0;
    let mut first = 0;
    while first < scops.len() {
        // The SCoPs of one function share its insertion point: their task functions go first.
        let at = scops[first].scop.insert_at;
        let end = first
            + scops[first..]
                .iter()
                .take_while(|sc| sc.scop.insert_at == at)
                .count();
        out.push_str(&text[pos..at]);
        pos = at;
        if first == 0 {
            out.push_str("/* ---- tiledflow: runtime interface and helpers ---- */\n");
            if matches!(opts.target, Target::Tasks | Target::Cuda) {
                out.push_str(STREAMRT_H);
                out.push_str(RUNTIME_START);
            }
            out.push_str(HELPERS);
            out.push_str(&c_ast::row_transposes());
            if scops
                .iter()
                .any(|sc| sc.materialized.iter().any(|m| m.blocks.is_none()))
            {
                out.push_str(COPIES_ALLOC);
            }
            if scops
                .iter()
                .any(|sc| sc.materialized.iter().any(|m| m.blocks.is_some()))
            {
                out.push_str(BLOCKS_ROW);
            }
            if let Some(prelude) = prelude {
                out.push_str(prelude);
            }
        }
        // GCC bounds the trip counts of the tile loops by the arrays' extents and, for a size
        // that is a parameter, warns "iteration N invokes undefined behavior" about sizes the
        // program never runs (the original loops get no such warning): not the user's concern.
        out.push_str(GCC_QUIET_BEGIN);
        for (n, sc) in scops.iter().enumerate().take(end).skip(first) {
            out.push_str(&task_functions(n, sc, line_file.as_deref()));
            if matches!(opts.target, Target::Tasks | Target::Cuda) {
                out.push_str(&spawn_functions(n, sc.program, sc.scop));
            }
        }
        out.push_str(GCC_QUIET_END);
        for (n, sc) in scops.iter().enumerate().take(end).skip(first) {
            if opts.line_directives {
                let _ = writeln!(
                    out,
                    "#line {} \"{}\"",
                    line_of(text, pos),
                    c_string(&file.path)
                );
            }
            out.push_str(&text[pos..sc.scop.region.start]);
            let used =
                counters_declared_outside(sc.scop, &text[sc.scop.region.start..sc.scop.region.end]);
            if !used.is_empty() {
                let _ = writeln!(
                    out,
                    "  {{ {}",
                    used.iter()
                        .map(|c| format!("(void){c};"))
                        .collect::<String>()
                );
            }
            out.push_str(&control_program(n, sc, opts.target));
            if !used.is_empty() {
                out.push_str("  }\n");
            }
            pos = sc.scop.region.end;
        }
        if opts.line_directives {
            let _ = writeln!(
                out,
                "#line {} \"{}\"",
                line_of(text, pos),
                c_string(&file.path)
            );
        }
        first = end;
    }
    out.push_str(&text[pos..]);
    out
}

/// 1-based line number of byte offset `pos`.
fn line_of(text: &str, pos: usize) -> usize {
    text[..pos].bytes().filter(|&b| b == b'\n').count() + 1
}

pub(crate) fn c_string(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// How the task bodies reach a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Capture {
    /// File scope: named directly.
    Direct,
    /// Local array: `void *` and inner dimensions.
    Array,
    /// Local scalar written by the SCoP: by address.
    Pointer,
    /// Local scalar only read: by value.
    Value,
}

fn capture(a: &Array) -> Capture {
    match (a.storage, a.rank, a.written) {
        (Storage::File, _, _) => Capture::Direct,
        (Storage::Local, 0, true) => Capture::Pointer,
        (Storage::Local, 0, false) => Capture::Value,
        (Storage::Local, _, _) => Capture::Array,
        // Declared by the control program itself (`control_program`); always a scalar.
        (Storage::Block, _, _) => Capture::Pointer,
    }
}

fn env_struct(n: usize) -> String {
    format!("tf_env{n}")
}

pub(crate) fn task_fn(n: usize, class: usize) -> String {
    format!("tf_scop{n}_{}", class_name(class))
}

fn class_name(class: usize) -> String {
    format!("n{class}")
}

/// The constant extent of inner dimension `d` (1 ≤ d < rank) of an array, if its type has one.
fn const_extent(a: &Array, d: usize) -> Option<u64> {
    a.extents.get(d).copied().flatten()
}

/// `[d]` suffixes of an array's inner dimensions: the constant where the declared type has one
/// (so that the C compiler knows the strides: through runtime strides it cannot tell two rows
/// apart, and versions or gives up vectorizing the point loops), otherwise read from the
/// environment.
fn inner_dims(a: &Array, env: &str) -> String {
    (1..a.rank.max(1))
        .map(|d| match const_extent(a, d) {
            Some(c) => format!("[{c}]"),
            None => format!("[{env}->{}_d[{}]]", a.name, d - 1),
        })
        .collect()
}

/// The scalars the tasks get by value in their environment, as (C type, name): the SCoP's
/// parameters declared in its function, then the tile grids' shifts.
fn local_params<'a>(
    scop: &'a Scop,
    row_lines: &'a [polyhedral::RowLine],
) -> impl Iterator<Item = (&'a str, &'a str)> {
    scop.params
        .iter()
        .filter(|p| p.storage == Storage::Local)
        .map(|p| (p.c_type.as_str(), p.name.as_str()))
        .chain(row_lines.iter().map(|l| ("long", l.param.as_str())))
}

/// The environment struct and one function per task class.
fn task_functions(n: usize, sc: &ScopCode<'_>, line_file: Option<&str>) -> String {
    let scop = sc.scop;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/* ---- tiledflow: SCoP {n} of {}() (line {}): {} task classes ---- */",
        scop.function,
        scop.loc.line,
        sc.program.classes.len()
    );
    let _ = writeln!(s, "struct {} {{", env_struct(n));
    let mut fields = 0;
    for (c_type, name) in local_params(scop, &sc.program.row_lines) {
        let _ = writeln!(s, "  {c_type} {name};");
        fields += 1;
    }
    for a in &scop.arrays {
        match capture(a) {
            Capture::Direct => {}
            Capture::Array => {
                let _ = writeln!(s, "  void *{};", a.name);
                if a.rank > 1 {
                    let _ = writeln!(s, "  long {}_d[{}];", a.name, a.rank - 1);
                }
                fields += 1;
            }
            Capture::Pointer => {
                let _ = writeln!(s, "  {} *{};", a.elem_type, a.name);
                fields += 1;
            }
            Capture::Value => {
                let _ = writeln!(s, "  {} {};", a.elem_type, a.name);
                fields += 1;
            }
        }
    }
    if fields == 0 {
        s.push_str("  char tf_unused;\n");
    }
    s.push_str("};\n");
    for (k, class) in sc.program.classes.iter().enumerate() {
        s.push_str(&task_function(n, k, class, sc, line_file));
    }
    s
}

/// Soft barrier `b` (streamrt's `tf_barrier_begin`: no body): it waits for every source tile of
/// its dependence and publishes the one token of its stream, which the targets wait for.
fn barrier_task(prog: &TaskProgram, b: usize, bar: &Barrier, gpu: bool) -> String {
    let api = if gpu { "tf_gpu_" } else { "tf_" };
    let mut s = String::new();
    let stream = prog.classes.len() + b;
    let sd = prog.class(bar.src).n_dims.max(1);
    let _ = writeln!(
        s,
        "    {{ /* soft barrier B{b}: every tile of {} before any tile of {} ({}) */",
        bar.src, bar.dst, bar.dep
    );
    s.push_str("      const long tf_key[1] = { 0 };\n");
    match gpu {
        true => {
            let _ = writeln!(s, "      tf_gpu_task_begin(tf_g, tf_st[{stream}], tf_key);");
        }
        false => {
            let _ = writeln!(s, "      tf_barrier_begin(tf_g, tf_st[{stream}], tf_key);");
        }
    }
    c_ast::stmt(&mut s, &bar.sources, 3, &mut |out, _name, args, depth| {
        let pad = "  ".repeat(depth);
        let _ = writeln!(
            out,
            "{pad}{{ const long tf_src[{sd}] = {{ {} }}; {api}task_input(tf_g, tf_st[{}], tf_src); }}",
            key_list(args),
            bar.src.index()
        );
    });
    let _ = writeln!(s, "      {api}task_end(tf_g);\n    }}");
    s
}

/// Task function `k`: a wrapper with the runtime's signature that reads the arrays from the
/// environment and passes them to the body, where they are `restrict`-qualified parameters (the
/// C compiler ignores `restrict` on local pointers). Distinct arrays of a SCoP never overlap (the
/// dependence analysis assumes it, and `--scop auto` refuses pointers that may alias), so the
/// qualifier adds no assumption; it spares the point loops run-time alias checks and lets the
/// compiler reorder them (measured: gemm's tiles took 1.5x longer without it). The written local
/// scalars that are not private (reached by address) are `restrict` parameters as well: the
/// variables are distinct objects, and without it two of them may be one for all the compiler
/// knows, so none stays in a register across a loop that stores to another (durbin's `sum`,
/// accumulated beside stores to `z` with `alpha` read: the loop loaded `alpha` and stored `sum`
/// on every iteration).
fn task_function(
    n: usize,
    k: usize,
    class: &TaskClass,
    sc: &ScopCode<'_>,
    line_file: Option<&str>,
) -> String {
    let (scop, row_lines, private, materialized) = (
        sc.scop,
        &sc.program.row_lines[..],
        sc.private,
        sc.materialized,
    );
    let mut s = String::new();
    let env = env_struct(n);
    let blocks = class_blocks(materialized, class);
    let arrays: Vec<&Array> = scop
        .arrays
        .iter()
        .filter(|a| capture(a) == Capture::Array)
        .collect();
    let array_type =
        |a: &Array, name: &str| format!("{} (*{name}){}", a.elem_type, inner_dims(a, "tf_env"));
    // The written local scalars that are not private: by address, as `restrict` parameters too.
    let pointers: Vec<&Array> = scop
        .arrays
        .iter()
        .filter(|a| capture(a) == Capture::Pointer && !private.iter().any(|p| p.array == a.id))
        .collect();
    let params: String = arrays
        .iter()
        .map(|a| format!(", {}", array_type(a, &format!("restrict const {}", a.name))))
        .chain(
            pointers
                .iter()
                .map(|a| format!(", {} *restrict const {}", a.elem_type, a.name)),
        )
        .collect();
    let _ = writeln!(
        s,
        "TF_BODY static void {}_body(const struct {env} *tf_env, const long *tf_key{params})",
        task_fn(n, k)
    );
    s.push_str("{\n");
    for (c_type, name) in local_params(scop, row_lines) {
        let _ = writeln!(s, "  const {c_type} {name} = tf_env->{name}; (void){name};");
    }
    for a in &scop.arrays {
        match capture(a) {
            // A private scalar at file scope: its address is taken before the local hides it.
            Capture::Direct if private.iter().any(|p| p.array == a.id) => {
                let _ = writeln!(
                    s,
                    "  {} *const tf_out_{} = &{};",
                    a.elem_type, a.name, a.name
                );
                let _ = writeln!(s, "  {} {} = 0; (void){};", a.elem_type, a.name, a.name);
            }
            Capture::Direct => {}
            Capture::Array => {
                let _ = writeln!(s, "  (void){};", a.name);
            }
            Capture::Pointer if private.iter().any(|p| p.array == a.id) => {
                let _ = writeln!(
                    s,
                    "  {} *const tf_out_{} = tf_env->{};",
                    a.elem_type, a.name, a.name
                );
                let _ = writeln!(s, "  {} {} = 0; (void){};", a.elem_type, a.name, a.name);
            }
            Capture::Pointer => {
                let _ = writeln!(s, "  (void){};", a.name);
            }
            Capture::Value => {
                let _ = writeln!(
                    s,
                    "  const {} {} = tf_env->{}; (void){};",
                    a.elem_type, a.name, a.name, a.name
                );
            }
        }
    }
    for (d, key) in names(KEY_NAME, class.n_dims).iter().enumerate() {
        let _ = writeln!(s, "  const long {key} = tf_key[{d}];");
    }
    s.push_str("  (void)tf_env; (void)tf_key;\n");
    c_ast::stmt(&mut s, &class.body, 1, &mut |out, name, args, depth| {
        statement(out, scop, private, name, args, depth, line_file);
    });
    for p in private {
        s.push_str(&copy_out(p, k, class.n_dims, &scop.array(p.array).name));
    }
    s.push_str("}\n");
    let _ = writeln!(
        s,
        "static void {}(const void *tf_envp, const long *tf_key)",
        task_fn(n, k)
    );
    s.push_str("{\n");
    let _ = writeln!(
        s,
        "  const struct {env} *tf_env = (const struct {env} *)tf_envp;"
    );
    // An array of copies in blocks: this task's tile row's (its memory, shifted), or nothing
    // where the class does not touch the copies.
    let args: String = arrays
        .iter()
        .map(|a| {
            let in_blocks = materialized
                .iter()
                .any(|m| m.array == a.id && m.blocks.is_some());
            match blocks.iter().find(|(m, _)| m.array == a.id) {
                Some((m, b)) => format!(
                    ", ({})tf_blocks_row((tf_blocks *)tf_env->{}, tf_key[0], {})",
                    array_type(a, ""),
                    a.name,
                    block_bytes(m, b)
                ),
                None if in_blocks => format!(", ({})0", array_type(a, "")),
                None => format!(", ({})tf_env->{}", array_type(a, ""), a.name),
            }
        })
        .chain(pointers.iter().map(|a| format!(", tf_env->{}", a.name)))
        .collect();
    let _ = writeln!(s, "  {}_body(tf_env, tf_key{args});", task_fn(n, k));
    for (m, _) in &blocks {
        let _ = writeln!(
            s,
            "  tf_blocks_leave((tf_blocks *)tf_env->{}, tf_key[0]);",
            m.name
        );
    }
    s.push_str("}\n");
    s
}

/// The end of a task of class `k` for private scalar `p`: the task of the tile that runs the
/// last write copies its variable `name` back to the user's.
fn copy_out(p: &PrivateScalar, k: usize, n_dims: usize, name: &str) -> String {
    let mut s = String::new();
    let Some(Some(tiles)) = p.copy_out.get(k) else {
        let _ = writeln!(s, "  (void)tf_out_{name};");
        return s;
    };
    let _ = writeln!(
        s,
        "  {{ /* copy-out of {name}: only the task of the last write */"
    );
    s.push_str("    int tf_last = 0;\n");
    let keys = names(KEY_NAME, n_dims);
    c_ast::stmt(&mut s, tiles, 2, &mut |out, _name, args, depth| {
        let pad = "  ".repeat(depth);
        let same: Vec<String> = keys
            .iter()
            .zip(args)
            .map(|(key, a)| format!("{key} == ({})", c_ast::expr(a)))
            .collect();
        match same.is_empty() {
            true => {
                let _ = writeln!(out, "{pad}tf_last = 1;");
            }
            false => {
                let _ = writeln!(out, "{pad}if ({}) tf_last = 1;", same.join(" && "));
            }
        }
    });
    let _ = writeln!(s, "    if (tf_last) *tf_out_{name} = {name};");
    s.push_str("  }\n");
    s
}

/// One statement instance: the user's text with iterators replaced, preceded by a `#line`
/// directive naming its source line when `line_file` (the C-escaped file name) is given.
pub(crate) fn statement(
    out: &mut String,
    scop: &Scop,
    private: &[PrivateScalar],
    name: &str,
    args: &[Expr],
    depth: usize,
    line_file: Option<&str>,
) {
    let pad = "  ".repeat(depth);
    if name == polyhedral::SCALAR_LOOP_USER {
        let _ = writeln!(out, "{pad}TF_SCALAR_LOOP;");
        return;
    }
    if name == polyhedral::ROW_LANES_USER || name == polyhedral::ROW_STEPS_USER {
        return; // the loop's printer reads it (`c_ast::row_lanes_loop`, `step_lanes_loop`)
    }
    let (name, part) = polyhedral::split_kernel_user(name);
    let Some(stmt) = name
        .strip_prefix('S')
        .and_then(|k| k.parse::<usize>().ok())
        .and_then(|k| scop.statements.get(k))
    else {
        // polyhedral only produces statement names of this SCoP.
        let _ = writeln!(
            out,
            "{pad}#error \"tiledflow internal error: unknown statement {name}\""
        );
        return;
    };
    let start = out.len();
    if let Some(file) = line_file {
        let _ = writeln!(out, "#line {} \"{file}\"", stmt.loc.line);
    }
    out.push_str(&pad);
    let text_at = out.len();
    let iter = |k: usize| match args.get(k) {
        Some(e) => c_ast::expr(e),
        None => "tf_missing_iterator".to_string(),
    };
    let var = |id: ArrayId| {
        let a = scop.array(id);
        if capture(a) == Capture::Pointer && !private.iter().any(|p| p.array == a.id) {
            format!("(*{})", a.name)
        } else {
            a.name.clone()
        }
    };
    let elem_type = |body: &[BodyPiece]| {
        body.iter()
            .find_map(|p| match p {
                BodyPiece::Var(id) => Some(scop.array(*id).elem_type.clone()),
                _ => None,
            })
            .unwrap_or_else(|| "double".into())
    };
    let acc = |r: usize| format!("tf_acc{r}");
    match part {
        Some(KernelPart::Load(r)) => {
            let element = scop_ir::lanes::render_accumulated(&stmt.body, &iter, &var, "", true);
            let _ = write!(out, "{} {} = {element};", elem_type(&stmt.body), acc(r));
        }
        Some(KernelPart::Store(r)) => {
            let element = scop_ir::lanes::render_accumulated(&stmt.body, &iter, &var, "", true);
            let _ = write!(out, "{element} = {};", acc(r));
        }
        Some(KernelPart::Accumulate(r)) => {
            out.push_str(&scop_ir::lanes::render_accumulated(
                &stmt.body,
                &iter,
                &var,
                &acc(r),
                false,
            ));
        }
        // A column kept in a buffer of its own (`polyhedral::column`).
        Some(KernelPart::ColumnDecl(red, rows)) => {
            match scop_ir::lanes::column_relation(scop, stmt, red) {
                Some((_, _, id)) => {
                    let _ = write!(
                        out,
                        "{} {}[{rows}] __attribute__((aligned(64)));",
                        scop.array(id).elem_type,
                        polyhedral::COLUMN_BUFFER
                    );
                }
                None => out.push_str("#error tiledflow internal error: no column"),
            }
        }
        Some(KernelPart::ColumnFill(red)) => {
            let col = polyhedral::COLUMN_BUFFER;
            out.push_str(&scop_ir::lanes::column_fill(stmt, red, &iter, &var, col));
        }
        Some(KernelPart::ColumnAccumulate(red, r)) => {
            let col = polyhedral::COLUMN_BUFFER;
            out.push_str(&scop_ir::lanes::render_columned(
                stmt,
                red,
                &iter,
                &var,
                &acc(r),
                col,
            ));
        }
        Some(KernelPart::ColumnStore(r)) => {
            let element = scop_ir::lanes::render_accumulated(&stmt.body, &iter, &var, "", true);
            match scop_ir::lanes::assigned_row(&stmt.body, &iter, &var) {
                Some(row) => {
                    let _ = write!(
                        out,
                        "{element} = {a}; {}[{row}] = {a};",
                        polyhedral::COLUMN_BUFFER,
                        a = acc(r)
                    );
                }
                None => out.push_str("#error tiledflow internal error: no assigned row"),
            }
        }
        // Operands across the innermost loop read from buffers (`polyhedral::gather`).
        Some(KernelPart::GatherDecl(q, n, base, rows, cols)) => {
            let packable = |id: ArrayId| scop_ir::lanes::never_written(scop, id);
            match scop_ir::lanes::strided_relations(scop, stmt, q, &packable).get(n) {
                Some((_, id)) => {
                    let m = base + n;
                    let _ = write!(
                        out,
                        "{} {}[{rows}][{cols}] __attribute__((aligned(64))); const long {} = {}, {} = {};",
                        scop.array(*id).elem_type,
                        gather_buffer(m),
                        gather_start(m, 0),
                        iter(0),
                        gather_start(m, 1),
                        iter(1)
                    );
                }
                None => out.push_str("#error tiledflow internal error: no strided read"),
            }
        }
        Some(KernelPart::GatherFill(q, n, base)) => {
            let packable = |id: ArrayId| scop_ir::lanes::never_written(scop, id);
            match scop_ir::lanes::strided_relations(scop, stmt, q, &packable).get(n) {
                Some((_, id)) => {
                    let m = base + n;
                    let (a, b) = (iter(0), iter(1));
                    let _ = write!(
                        out,
                        "{}[{b} - {}][{a} - {}] = {}[{a}][{b}];",
                        gather_buffer(m),
                        gather_start(m, 1),
                        gather_start(m, 0),
                        var(*id)
                    );
                }
                None => out.push_str("#error tiledflow internal error: no strided read"),
            }
        }
        Some(KernelPart::Gathered(q, base)) => {
            let packable = |id: ArrayId| scop_ir::lanes::never_written(scop, id);
            let buffer = |n: usize, first: &str, second: &str| {
                let m = base + n;
                format!(
                    "{}[({second}) - {}][({first}) - {}]",
                    gather_buffer(m),
                    gather_start(m, 1),
                    gather_start(m, 0)
                )
            };
            out.push_str(&scop_ir::lanes::render_strided(
                stmt, q, &packable, &iter, &var, &buffer,
            ));
        }
        // A loop whose statements' rows run as vector lanes step by step (`polyhedral::rows`).
        Some(KernelPart::Step(p)) => {
            let elem = elem_type(&stmt.body);
            let (ty, load) = match elem.as_str() {
                "float" => ("TF_ROWF_TYPE", "TF_ROWF"),
                _ => ("TF_ROWD_TYPE", "TF_ROWD"),
            };
            let text = scop_ir::lanes::StepStatement {
                scop,
                stmt,
                row: p.row,
                elem: &elem,
            };
            let written = polyhedral::step_written(p.vector);
            let operand = |n: usize| polyhedral::step_operand(p.vector, n);
            let carried = |n: usize| p.carried >> n & 1 == 1;
            // `name = <text>` per lane: one vector load in lane 0 where the text is contiguous.
            let fill = |name: &str, (text, contiguous): &(String, bool), lane: usize| match (
                contiguous, lane,
            ) {
                (true, 0) => format!("{name} = {load}({text});"),
                (true, _) => String::new(),
                (false, _) => format!("{name}[{lane}] = {text};"),
            };
            let operands = text.operands(&iter, &var);
            let parts: Vec<String> = match p.what {
                // Zeroed, so that filling them lane by lane reads nothing undefined (and C
                // compilers do not warn that it may).
                StepWhat::Decl => {
                    let mut names = vec![written.clone()];
                    names.extend((0..operands.len()).map(operand));
                    let names: Vec<String> = names.iter().map(|n| format!("{n} = {{0}}")).collect();
                    vec![format!("{ty} {};", names.join(", "))]
                }
                StepWhat::Carry(lane) => (0..operands.len())
                    .filter(|&n| carried(n))
                    .map(|n| fill(&operand(n), &operands[n], lane))
                    .collect(),
                StepWhat::Gather(lane) => {
                    let mut fills: Vec<String> = (0..operands.len())
                        .filter(|&n| !carried(n))
                        .map(|n| fill(&operand(n), &operands[n], lane))
                        .collect();
                    if text.compound() {
                        fills.push(fill(&written, &text.written(&iter, &var), lane));
                    }
                    fills
                }
                StepWhat::Step => vec![text.render(&iter, &var, &written, &operand)],
                StepWhat::Scatter(lane) => {
                    let (element, contiguous) = text.written(&iter, &var);
                    vec![match (contiguous, lane) {
                        (true, 0) => format!("{load}({element}) = {written};"),
                        (true, _) => String::new(),
                        (false, _) => format!("{element} = {written}[{lane}];"),
                    }]
                }
            };
            let parts: Vec<String> = parts.into_iter().filter(|p| !p.is_empty()).collect();
            out.push_str(&parts.join(" "));
        }
        // A loop whose rows run as vector lanes (`polyhedral::rows`).
        Some(KernelPart::Row(p)) => {
            let elem = elem_type(&stmt.body);
            let (ty, load, transpose, lanes) = match elem.as_str() {
                "float" => ("TF_ROWF_TYPE", "TF_ROWF", "tf_transpose_rowf", 8),
                _ => ("TF_ROWD_TYPE", "TF_ROWD", "tf_transpose_rowd", 4),
            };
            let rows = polyhedral::row_iterators(p.rows);
            let text = scop_ir::lanes::RowStatement {
                scop,
                stmt,
                red: p.red,
                rows: &rows,
                elem: &elem,
            };
            let acc = format!("tf_acc{}", p.vector);
            let operand = |n: usize| format!("tf_rows{}_{n}", p.vector);
            let operands = || text.operands(&iter, &var);
            let element = || scop_ir::lanes::render_accumulated(&stmt.body, &iter, &var, "", true);
            match p.what {
                RowWhat::Decl => {
                    let _ = write!(out, "{ty} {acc};");
                    for n in 0..operands().len() {
                        let _ = write!(out, " {ty} {}[{lanes}];", operand(n));
                    }
                }
                RowWhat::Acc(l) => {
                    let _ = write!(out, "{acc}[{l}] = {};", element());
                }
                RowWhat::Load(l) => {
                    let loads: Vec<String> = operands()
                        .iter()
                        .enumerate()
                        .map(|(n, text)| {
                            format!("{}[{l}] = {load}({text}); TF_PREFETCH({text});", operand(n))
                        })
                        .collect();
                    out.push_str(&loads.join(" "));
                }
                RowWhat::Transpose => {
                    let calls: Vec<String> = (0..operands().len())
                        .map(|n| format!("{transpose}({});", operand(n)))
                        .collect();
                    out.push_str(&calls.join(" "));
                }
                RowWhat::Step(k) => {
                    out.push_str(
                        &text.render(&iter, &var, &acc, &|n| format!("{}[{k}]", operand(n))),
                    );
                }
                RowWhat::Scalar(l) => {
                    out.push_str(&scop_ir::lanes::render_accumulated(
                        &stmt.body,
                        &iter,
                        &var,
                        &format!("{acc}[{l}]"),
                        false,
                    ));
                }
                RowWhat::Store(l) => {
                    let _ = write!(out, "{} = {acc}[{l}];", element());
                }
            }
        }
        // A kernel's copy: the occurrences along the lane iterator as vectors; an update run in
        // a lanes loop (`polyhedral::FusedUpdate`), as the row lanes' 32-byte vectors.
        Some(KernelPart::Lanes(q)) => {
            out.push_str(&scop_ir::lanes::render(
                &stmt.body,
                q,
                &iter,
                &var,
                &vector_of(scop),
            ));
        }
        Some(KernelPart::RowLanes(q)) => {
            out.push_str(&scop_ir::lanes::render(
                &stmt.body,
                q,
                &iter,
                &var,
                &vectors_of(scop, ("TF_ROWD(", "TF_ROWF(")),
            ));
        }
        // The same, with the packed occurrences read from their buffers, and the scaled
        // product of row `row` from its own.
        Some(KernelPart::PackedLanes(q, r, frozen, pinned))
        | Some(KernelPart::ScaledLanes(q, r, _, frozen, pinned)) => {
            let (open, close) = match elem_type(&stmt.body).as_str() {
                "float" => ("TF_VF(", ")"),
                _ => ("TF_VD(", ")"),
            };
            let packed = |n: usize| match pinned {
                Some(c) => pack_vector(n, c),
                None => format!("{open}{}{close}", pack_element(n, &iter(r), &iter(q))),
            };
            let scaled = match part {
                Some(KernelPart::ScaledLanes(_, _, row, _, _)) => {
                    Some(scaled_element(&iter(r), row))
                }
                _ => None,
            };
            out.push_str(&scop_ir::lanes::render_packed(
                stmt,
                q,
                r,
                &iter,
                &var,
                &vector_of(scop),
                &packed,
                scaled.as_deref(),
                frozen,
            ));
        }
        Some(KernelPart::PackVector(n, q, r, c)) => {
            let (vector, open) = match elem_type(&stmt.body).as_str() {
                "float" => ("TF_VF_TYPE", "TF_VF("),
                _ => ("TF_VD_TYPE", "TF_VD("),
            };
            let name = pack_vector(n, c);
            let _ = write!(
                out,
                "{vector} {name} = {open}{}); TF_PIN({name});",
                pack_element(n, &iter(r), &iter(q))
            );
        }
        Some(KernelPart::ScaleFill(q, r, row, frozen)) => {
            let _ = write!(
                out,
                "{} = {};",
                scaled_element(&iter(r), row),
                scop_ir::lanes::scaled_text(stmt, q, r, &iter, &var, frozen)
            );
        }
        Some(KernelPart::PackFill(n, q, r, frozen)) => {
            let _ = write!(
                out,
                "{} = {};",
                pack_element(n, &iter(r), &iter(q)),
                scop_ir::lanes::packed_text(stmt, q, r, n, &iter, &var, frozen)
            );
        }
        None => {
            for piece in &stmt.body {
                match piece {
                    BodyPiece::Text(t) => out.push_str(t),
                    BodyPiece::Iter(k) => out.push_str(&iter(*k)),
                    BodyPiece::Var(id) => out.push_str(&var(*id)),
                }
            }
        }
    }
    if out.len() == text_at {
        // A part with nothing to print (another lane's share of one vector load).
        out.truncate(start);
        return;
    }
    out.push('\n');
}

/// The buffer of gathered operand `m` of a tile (`polyhedral::gather`).
fn gather_buffer(m: usize) -> String {
    format!("tf_gpack{m}")
}

/// The first index of dimension `d` of gathered operand `m`'s box.
fn gather_start(m: usize, d: usize) -> String {
    format!("tf_gp{m}_{d}")
}

/// How a kernel's statement reads an occurrence of array `id` as a vector: `TF_VD(` .. `)`
/// (`TF_VF` for `float`).
fn vector_of(scop: &Scop) -> impl Fn(ArrayId) -> (String, String) + '_ {
    vectors_of(scop, ("TF_VD(", "TF_VF("))
}

/// The same with `macros`' opening for doubles and for floats.
fn vectors_of<'s>(
    scop: &'s Scop,
    macros: (&'static str, &'static str),
) -> impl Fn(ArrayId) -> (String, String) + 's {
    move |id: ArrayId| {
        let v = match scop.array(id).elem_type.as_str() {
            "float" => macros.1,
            _ => macros.0,
        };
        (v.to_string(), ")".to_string())
    }
}

/// Element `[red - start][row]` of a kernel's scaled products (`polyhedral::VectorLanes`).
fn scaled_element(red: &str, row: usize) -> String {
    format!(
        "{}[({red}) - {}][{row}]",
        polyhedral::SCALED_BUFFER,
        polyhedral::PACK_RED_START
    )
}

/// Element `[red - start][lane - start]` of packed buffer `n` (`polyhedral::Packs`).
/// The register of packed occurrence `n`'s vector `c` at a reduction step
/// ([`KernelPart::PackVector`]).
fn pack_vector(n: usize, c: usize) -> String {
    format!("tf_pv{n}_{c}")
}

fn pack_element(n: usize, red: &str, lane: &str) -> String {
    format!(
        "{}[({red}) - {}][({lane}) - {}]",
        polyhedral::PACK_BUFFER.replace("{n}", &n.to_string()),
        polyhedral::PACK_RED_START,
        polyhedral::PACK_LANE_START
    )
}

/// The arrays of copies kept in blocks lent by tile row (`polyhedral::copy_blocks`) that the
/// tasks of `class` touch: the block of a task is the one of its tile row, `tf_key[0]`.
fn class_blocks<'m>(
    materialized: &'m [polyhedral::Materialized],
    class: &TaskClass,
) -> Vec<(&'m polyhedral::Materialized, &'m polyhedral::CopyBlocks)> {
    materialized
        .iter()
        .filter_map(|m| m.blocks.as_ref().map(|b| (m, b)))
        .filter(|(m, _)| m.signs.iter().any(|(id, _)| class.statements.contains(id)))
        .collect()
}

/// The tile row whose block holds the copy that goes back to the user's variable after the
/// SCoP, where one does.
fn live_out_row(m: &polyhedral::Materialized, b: &polyhedral::CopyBlocks) -> Option<usize> {
    let (x, lo) = (m.last.first()?, m.lower.first()?);
    m.live_out
        .then(|| usize::try_from((x - lo) / b.rows.max(1)).ok())
        .flatten()
}

/// `[e1][e2]..`: the extents of `m`'s copies after the first (constants).
fn copies_inner(m: &polyhedral::Materialized) -> String {
    m.extents[1..].iter().map(|e| format!("[{e}]")).collect()
}

/// `sizeof(t[rows][e1]..)`: the bytes of one block of `m`'s copies.
fn block_bytes(m: &polyhedral::Materialized, b: &polyhedral::CopyBlocks) -> String {
    format!("sizeof({}[{}]{})", m.elem_type, b.rows, copies_inner(m))
}

/// Where a tile row's copies are for the tasks (`tf_blocks_row`): the block of row `row`, less
/// `row` blocks, so that the tasks index the copies with their own subscripts (`T row` to
/// `T row + T - 1` along the first). Integer arithmetic, not pointer arithmetic outside the
/// block: the address is only dereferenced at the block's own elements.
const BLOCKS_ROW: &str =
    "static inline void *tf_blocks_row(tf_blocks *b, long row, unsigned long bytes) {
  return (void *)((__UINTPTR_TYPE__)tf_blocks_at(b, row) - (__UINTPTR_TYPE__)row * bytes);
}
";

/// The allocation of arrays of copies (`polyhedral::materialize`), in files that have some. Their
/// pages are first touched by the tasks, inside the timed kernel: doitgen's `sum` at LARGE is 27
/// MB, 6 600 page faults of 4 KiB on 2 threads contending for the process' page tables. On
/// Linux the 2 MiB-aligned part of a large one is advised to be backed by huge pages (THP in
/// `madvise` mode, as on this project's machines, gives none otherwise): doitgen at LARGE ran in
/// 67 ms instead of 80 on 2 threads and 117 instead of 146 on one (medians of 9 and 7 runs, AMD
/// EPYC). Elsewhere, and when the advice is refused, it is plain `malloc`.
///
/// The same advice for the rows of the user's arrays that a SCoP writes was built and not kept:
/// back to back, deriche at LARGE (its three outputs, 106 MB, first touched in the kernel) ran
/// 0.48-0.66 of its time, but a run started after a few idle seconds ran 2.1-2.4x slower than
/// without (0.26 s against 0.11-0.125 s on one thread, three rounds with 4 s pauses), and the
/// runner's five runs of each program were bimodal (0.04 s or 0.30 s): on this project's VMs the
/// guest reports its free high-order pages to the host (virtio-balloon), so huge pages come from
/// memory the host must fault in again, where 4 KiB pages are reused warm. doitgen's copies
/// here (omp target, 27 MB) measured level either way in the same test.
const COPIES_ALLOC: &str = "\
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
extern int madvise(void *, __SIZE_TYPE__, int);
#endif
static void *tf_copies_alloc(__SIZE_TYPE__ n) {
  void *p = __builtin_malloc(n);
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
  const unsigned long h = 2ul << 20; /* a huge page */
  if (p && n >= 2 * h) {
    unsigned long lo = ((unsigned long)p + h - 1) & ~(h - 1), hi = ((unsigned long)p + n) & ~(h - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, 14 /* MADV_HUGEPAGE */);
  }
#endif
  return p;
}
";

/// The code that replaces a SCoP region.
fn control_program(n: usize, sc: &ScopCode<'_>, target: Target) -> String {
    let scop = sc.scop;
    let prog = sc.program;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  {{ /* tiledflow: SCoP {n}, {} */",
        match target {
            Target::Tasks => "dataflow tasks",
            Target::Seq => "tiled, sequential",
            Target::Omp => "tiled, OpenMP parallel loops",
            Target::Cuda => "CUDA kernels when a GPU is there, dataflow tasks otherwise",
        }
    );
    // Where the tile grids start, from the arrays' addresses (`polyhedral::align`).
    for line in &prog.row_lines {
        let _ = writeln!(
            s,
            "    const long {} = {}; /* tiles along the cache lines of {} */",
            line.param, line.init, line.array
        );
    }
    // The scalars the SCoP declared in its loops: one variable for all their instances.
    for a in scop.arrays.iter().filter(|a| a.storage == Storage::Block) {
        let _ = writeln!(s, "    {} {};", a.elem_type, a.name);
    }
    for m in sc.materialized {
        // Its size is a constant: tiledflow materializes only scalars whose loops have
        // constant bounds (`polyhedral::materialize`).
        let inner = copies_inner(m);
        let all: String = m.extents.iter().map(|e| format!("[{e}]")).collect();
        if let Some(b) = &m.blocks {
            // In blocks lent by tile row, each given back when its tasks are done (one use
            // more for the block whose copy goes back to the user's variable after the SCoP).
            // The typed pointer only gives the checks below their extents; the environment
            // holds the blocks.
            let kept = live_out_row(m, b);
            let users: Vec<String> = b
                .tasks
                .iter()
                .enumerate()
                .map(|(row, n)| (n + i64::from(Some(row) == kept)).to_string())
                .collect();
            let _ = writeln!(
                s,
                "    static const long tf_xu_{}[{}] = {{ {} }}; /* tasks per tile row */",
                m.scalar,
                users.len(),
                users.join(", ")
            );
            let _ = writeln!(
                s,
                "    tf_blocks *tf_xb_{scalar} = tf_blocks_new({count}, {bytes}, tf_xu_{scalar}); /* copies of {scalar}, by tile row */",
                scalar = m.scalar,
                count = users.len(),
                bytes = block_bytes(m, b),
            );
            let _ = writeln!(
                s,
                "    {t} (*{name}){inner} = 0;",
                t = m.elem_type,
                name = m.name,
            );
            continue;
        }
        let _ = writeln!(
            s,
            "    {t} (*{name}){inner} = ({t} (*){inner})tf_copies_alloc(sizeof({t}{all})); /* copies of {scalar} */",
            t = m.elem_type,
            name = m.name,
            scalar = m.scalar,
        );
        let _ = writeln!(
            s,
            "    if (!{}) __builtin_trap(); /* out of memory */",
            m.name
        );
    }
    // Environment.
    let _ = writeln!(s, "    struct {} tf_env = {{", env_struct(n));
    for (_, name) in local_params(scop, &prog.row_lines) {
        let _ = writeln!(s, "      .{name} = {name},");
    }
    for a in &scop.arrays {
        match capture(a) {
            Capture::Direct => {}
            Capture::Array => {
                let _ = writeln!(s, "      .{} = (void *){},", a.name, a.name);
                if a.rank > 1 {
                    let dims: Vec<String> = (1..a.rank)
                        .map(|d| {
                            let outer = format!("{}{}", a.name, "[0]".repeat(d));
                            let inner = format!("{}{}", a.name, "[0]".repeat(d + 1));
                            format!("(long)(sizeof({outer}) / sizeof({inner}))")
                        })
                        .collect();
                    let _ = writeln!(s, "      .{}_d = {{ {} }},", a.name, dims.join(", "));
                }
            }
            Capture::Pointer => {
                let _ = writeln!(s, "      .{} = &{},", a.name, a.name);
            }
            Capture::Value => {
                let _ = writeln!(s, "      .{} = {},", a.name, a.name);
            }
        }
    }
    s.push_str("    };\n");
    for m in sc.materialized.iter().filter(|m| m.blocks.is_some()) {
        let _ = writeln!(s, "    tf_env.{} = (void *)tf_xb_{};", m.name, m.scalar);
    }
    for a in scop
        .arrays
        .iter()
        .filter(|a| capture(a) == Capture::Array && a.rank > 1)
    {
        let _ = writeln!(
            s,
            "    _Static_assert(!__builtin_types_compatible_p(__typeof__({n}[0]), __typeof__(&{n}[0][0])), \
             \"tiledflow: array {n} is a pointer to pointers; only arrays and pointers to arrays are supported\");",
            n = a.name
        );
        // The task functions use the constant inner extents that tiledflow read: the program must
        // be compiled with the declarations it was generated from.
        for d in (1..a.rank).filter(|&d| const_extent(a, d).is_some()) {
            let _ = writeln!(
                s,
                "    _Static_assert(sizeof({n}{o}) / sizeof({n}{i}) == {c}, \"tiledflow: array {n} has another size than when this file was generated\");",
                n = a.name,
                o = "[0]".repeat(d),
                i = "[0]".repeat(d + 1),
                c = const_extent(a, d).unwrap_or_default(),
            );
        }
    }
    match target {
        Target::Seq => {
            for (k, class) in prog.classes.iter().enumerate() {
                let d = class.n_dims.max(1);
                c_ast::stmt(&mut s, &class.tiles, 2, &mut |out, _name, args, depth| {
                    let pad = "  ".repeat(depth);
                    let _ = writeln!(
                        out,
                        "{pad}{{ const long tf_key[{d}] = {{ {} }};",
                        key_list(args)
                    );
                    let _ = writeln!(out, "{pad}  {}(&tf_env, tf_key); }}", task_fn(n, k));
                });
            }
        }
        Target::Omp => match sc.omp {
            Some(plan) => s.push_str(&crate::emit_omp::tile_loops(plan, prog, &|k| task_fn(n, k))),
            None => {
                s.push_str("#error \"tiledflow internal error: no OpenMP plan for this SCoP\"\n")
            }
        },
        Target::Tasks => s.push_str(&spawns(n, prog, None)),
        Target::Cuda => {
            if let Some(gpu) = sc.cuda.and_then(|c| c.host.as_deref()) {
                s.push_str("    if (tf_gpu_mod) {\n");
                s.push_str(gpu);
                s.push_str("    } else {\n");
                s.push_str(&spawns(n, prog, None));
                s.push_str("    }\n");
            } else {
                if let Some(note) = sc.cuda.and_then(|c| c.note.as_deref()) {
                    let _ = writeln!(
                        s,
                        "    /* tiledflow: this SCoP stays on the CPU: {} */",
                        note.replace("*/", "* /")
                    );
                }
                s.push_str(&spawns(n, prog, None));
            }
        }
    }
    for m in sc.materialized {
        let mut last: Vec<i64> = m.last.iter().zip(&m.lower).map(|(x, lo)| x - lo).collect();
        let mut copies = m.name.clone();
        let kept = m
            .blocks
            .as_ref()
            .and_then(|b| Some((b, live_out_row(m, b)?)));
        if let (Some((b, row)), Some(first)) = (kept, last.first_mut()) {
            // The last copy, in the block of its tile row (still in use: one user more).
            *first -= row as i64 * b.rows;
            copies = format!("tf_xl_{}", m.scalar);
            let _ = writeln!(
                s,
                "    {t} (*{copies}){inner} = ({t} (*){inner})tf_blocks_at(tf_xb_{sc}, {row});",
                t = m.elem_type,
                inner = copies_inner(m),
                sc = m.scalar
            );
        }
        let last: String = last.iter().map(|x| format!("[{x}]")).collect();
        if !m.live_out {
            // Declared inside the SCoP: nobody reads it after.
        } else if m.own_rank == 0 {
            // The user's program may never read it again: the cast keeps the C compiler quiet.
            let _ = writeln!(s, "    {sc} = {copies}{last}; (void){sc};", sc = m.scalar);
        } else {
            // An array: the copy with every element's last value, whole (it writes all of them).
            let _ = writeln!(
                s,
                "    __builtin_memcpy({sc}, {copies}{last}, sizeof({copies}{last}));",
                sc = m.scalar
            );
        }
        if m.blocks.is_some() {
            let _ = writeln!(s, "    tf_blocks_free(tf_xb_{});", m.scalar);
        } else {
            let _ = writeln!(s, "    __builtin_free({});", m.name);
        }
    }
    s.push_str("  }\n");
    s
}

/// The task graph of SCoP `n`'s control program: streams, then every tile spawned in the order of
/// the tiled schedule with its inputs. With `gpu` (the GPU control program), the calls are those
/// of streamrt's GPU launch graph and `gpu(k, depth)` prints the launches of a tile of class `k`
/// (whose key is `tf_key`) at that indentation; otherwise tasks call the class's task function
/// with the environment `tf_env`.
pub(crate) fn spawns(
    n: usize,
    prog: &TaskProgram,
    gpu: Option<&dyn Fn(usize, usize) -> String>,
) -> String {
    let mut s = String::new();
    let api = if gpu.is_some() { "tf_gpu_" } else { "tf_" };
    match gpu {
        Some(_) => s.push_str("    tf_gpu_graph *tf_g = tf_gpu_graph_begin(tf_gpu_mod);\n"),
        None => s.push_str("    tf_graph *tf_g = tf_graph_begin();\n"),
    }
    let _ = writeln!(
        s,
        "    int tf_st[{}];",
        (prog.classes.len() + prog.barriers.len()).max(1)
    );
    // Streams: one per class, its box known at compile time or measured by a first pass over
    // the tiles.
    for (k, class) in prog.classes.iter().enumerate() {
        let d = class.n_dims.max(1);
        let _ = writeln!(s, "    {{ /* stream of {} */", class.name);
        if let Some(bx) = class.tile_box.as_ref().filter(|b| !b.is_empty()) {
            let list = |f: &dyn Fn(&(i64, i64)) -> i64| {
                bx.iter()
                    .map(|b| f(b).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(
                s,
                "      const long tf_lo[{d}] = {{ {} }}, tf_hi[{d}] = {{ {} }};",
                list(&|b| b.0),
                list(&|b| b.1)
            );
        } else {
            let _ = writeln!(s, "      long tf_lo[{d}], tf_hi[{d}];");
            let _ = writeln!(
                s,
                "      for (int tf_x = 0; tf_x < {d}; tf_x++) {{ tf_lo[tf_x] = 0; tf_hi[tf_x] = -1; }}"
            );
        }
        if class.n_dims > 0 && class.tile_box.is_none() {
            s.push_str("      int tf_first = 1;\n");
            c_ast::stmt(&mut s, &class.tiles, 3, &mut |out, _name, args, depth| {
                let pad = "  ".repeat(depth);
                let _ = writeln!(
                    out,
                    "{pad}{{ const long tf_key[{d}] = {{ {} }}; tf_box_add(tf_lo, tf_hi, &tf_first, {d}, tf_key); }}",
                    key_list(args)
                );
            });
        }
        if let (None, Some(dim)) = (gpu, class.spread) {
            let _ = writeln!(
                s,
                "      tf_st[{k}] = tf_stream_new_spread(tf_g, \"{}\", {}, tf_lo, tf_hi, {dim}); /* spread over the threads along its dimension {dim} */",
                class.name, class.n_dims
            );
        } else {
            let _ = writeln!(
                s,
                "      tf_st[{k}] = {api}stream_new(tf_g, \"{}\", {}, tf_lo, tf_hi);",
                class.name, class.n_dims
            );
        }
        s.push_str("    }\n");
    }
    for (b, bar) in prog.barriers.iter().enumerate() {
        let _ = writeln!(
            s,
            "    {{ long tf_lo[1] = {{ 0 }}, tf_hi[1] = {{ 0 }}; tf_st[{}] = {api}stream_new(tf_g, \"B{b}\", 0, tf_lo, tf_hi); }} /* soft barrier of {} */",
            prog.classes.len() + b,
            bar.dep
        );
    }
    // Tasks, in the order of the tiled schedule.
    for (k, class) in prog.classes.iter().enumerate() {
        if gpu.is_none() {
            if let Some(group) = prog.spawn_groups.iter().find(|g| g.members.contains(&k)) {
                if group.members.start == k {
                    s.push_str(&group_spawns(n, prog, group));
                }
                continue;
            }
        }
        let d = class.n_dims.max(1);
        for (b, bar) in prog
            .barriers
            .iter()
            .enumerate()
            .filter(|(_, bar)| bar.dst.index() == k)
        {
            s.push_str(&barrier_task(prog, b, bar, gpu.is_some()));
        }
        let mut user = |out: &mut String, name: &str, args: &[Expr], depth: usize| {
            let pad = "  ".repeat(depth);
            let Some((p, part)) = name
                .strip_prefix('P')
                .and_then(|p| p.parse::<usize>().ok())
                .and_then(|p| Some((p, class.partitions.get(p)?)))
            else {
                // polyhedral only produces partition names of this class.
                let _ = writeln!(
                    out,
                    "{pad}#error \"tiledflow internal error: unknown partition {name}\""
                );
                return;
            };
            let Some(gpu) = gpu else {
                // One line per place: the partition's spawn function does the rest.
                out.push_str(&spawn_line(&pad, n, k, p, d, args));
                return;
            };
            let key = format!("const long tf_key[{d}] = {{ {} }};", key_list(args));
            let _ = writeln!(out, "{pad}{{");
            let _ = writeln!(out, "{pad}  {key}");
            let _ = writeln!(out, "{pad}  tf_gpu_task_begin(tf_g, tf_st[{k}], tf_key);");
            for (dd, dst) in names(DST_NAME, class.n_dims).iter().enumerate() {
                let _ = writeln!(out, "{pad}  const long {dst} = tf_key[{dd}]; (void){dst};");
            }
            let key: Vec<String> = args.iter().map(c_ast::expr).collect();
            partition_inputs(out, prog, part, api, &key, depth);
            out.push_str(&gpu(k, depth + 1));
            let _ = writeln!(out, "{pad}  {api}task_end(tf_g);");
            let _ = writeln!(out, "{pad}}}");
        };
        if gpu.is_none() && class.spread == Some(0) {
            spread_loops(&mut s, &class.tiles, 2, &format!("{TILE_ITER}0"), &mut user);
        } else {
            c_ast::stmt(&mut s, &class.tiles, 2, &mut user);
        }
    }
    let _ = writeln!(s, "    {api}graph_end(tf_g);");
    s
}

/// The line that spawns the tile `args` (its `d` coordinates) of partition `p` of class `k`, by
/// the partition's spawn function ([`spawn_functions`]).
fn spawn_line(pad: &str, n: usize, k: usize, p: usize, d: usize, args: &[Expr]) -> String {
    format!(
        "{pad}{{ const long tf_key[{d}] = {{ {} }}; {}(tf_g, tf_st, tf_key, &tf_env); }}\n",
        key_list(args),
        spawn_fn(n, k, p)
    )
}

/// The spawns of a group of classes whose tiles are spawned together: the counted barriers into
/// any of them, then the group's loops ([`polyhedral::SpawnGroup`]), spread over the threads
/// along the host's dimension 0 when the host's stream is.
fn group_spawns(n: usize, prog: &TaskProgram, group: &polyhedral::SpawnGroup) -> String {
    let mut s = String::new();
    for (b, bar) in prog
        .barriers
        .iter()
        .enumerate()
        .filter(|(_, bar)| group.members.contains(&bar.dst.index()))
    {
        s.push_str(&barrier_task(prog, b, bar, false));
    }
    let members: Vec<String> = group
        .members
        .clone()
        .map(|k| prog.classes[k].name.clone())
        .collect();
    let _ = writeln!(
        s,
        "    /* the tiles of {} spawned together, along the first's dimension 0 */",
        members.join(", ")
    );
    let mut user = |out: &mut String, name: &str, args: &[Expr], depth: usize| {
        let pad = "  ".repeat(depth);
        let place = name.strip_prefix('N').and_then(|rest| {
            let (k, p) = rest.split_once('P')?;
            let (k, p) = (k.parse::<usize>().ok()?, p.parse::<usize>().ok()?);
            (group.members.contains(&k) && p < prog.classes[k].partitions.len()).then_some((k, p))
        });
        let Some((k, p)) = place else {
            // polyhedral only produces user nodes of this form.
            let _ = writeln!(
                out,
                "{pad}#error \"tiledflow internal error: unknown group member {name}\""
            );
            return;
        };
        let d = prog.classes[k].n_dims.max(1);
        out.push_str(&spawn_line(&pad, n, k, p, d, args));
    };
    if prog.classes[group.members.start].spread == Some(0) {
        spread_loops(&mut s, &group.tiles, 2, &format!("{TILE_ITER}0"), &mut user);
    } else {
        c_ast::stmt(&mut s, &group.tiles, 2, &mut user);
    }
    s
}

/// Prints the spawn loops `ast` of a stream spread over the threads along its first dimension
/// (`iter`): the loop over `iter` visits the threads' blocks of it side by side (the first value
/// of each block, then the second, ...: `tf_spread_at`), so that every thread's home queue
/// fills from the first spawns on and each thread starts at the beginning of its own block;
/// the other loops are printed as they are. The order of the spawns is free here: the runtime
/// orders every dependent pair whatever the order of their spawns (and tiles of one stream with
/// different coordinates 0 do not depend on each other); the inner loops keep their order.
/// A loop over `iter` that is not `iter <= ub` (or `<`) with step 1 keeps its order.
fn spread_loops(
    out: &mut String,
    ast: &Ast,
    depth: usize,
    iter: &str,
    user: &mut c_ast::UserPrinter<'_>,
) {
    let mut blocks =
        |out: &mut String, l: &c_ast::Loop<'_>, depth: usize, user: &mut c_ast::UserPrinter<'_>| {
            let Some((op, ub)) = crate::emit_omp::canonical_bound(l.iter, l.cond, l.inc) else {
                return false;
            };
            let (pad, iter) = ("  ".repeat(depth), l.iter);
            let extent = match op {
                "<=" => format!("{} - tf_lb + 1", c_ast::expr(ub)),
                _ => format!("{} - tf_lb", c_ast::expr(ub)),
            };
            let _ = writeln!(
                out,
                "{pad}{{ /* each thread's block of {iter}, side by side */"
            );
            let _ = writeln!(
                out,
                "{pad}  const long tf_lb = {}, tf_n = {extent}, tf_p = tf_num_threads();",
                c_ast::expr(l.init)
            );
            let _ = writeln!(
            out,
            "{pad}  for (long tf_t = 0; tf_t < tf_p * ((tf_n + tf_p - 1) / tf_p); tf_t += 1) {{"
        );
            let _ = writeln!(
                out,
                "{pad}    const long {iter} = tf_lb + tf_spread_at(tf_t, tf_n, tf_p);"
            );
            let _ = writeln!(out, "{pad}    if ({iter} < tf_lb) continue;");
            c_ast::stmt(out, l.body, depth + 2, user);
            let _ = writeln!(out, "{pad}  }}");
            let _ = writeln!(out, "{pad}}}");
            true
        };
    c_ast::stmt_at_loops(out, ast, depth, iter, &mut blocks, user);
}

/// The function that spawns a tile of partition `p` of class `k` (see [`spawn_functions`]).
fn spawn_fn(n: usize, k: usize, p: usize) -> String {
    format!("{}_p{p}_spawn", task_fn(n, k))
}

/// One function per partition of each class that spawns the tile `tf_key` of it: the task and
/// its inputs. ISL's tile loops reach one partition at many places (285 in a random SCoP of 9
/// statements), and a spawn written out at each, with the partition's loops over source tiles,
/// multiplied the control program's size (36 000 lines, 90 s of gcc).
fn spawn_functions(n: usize, prog: &TaskProgram, scop: &Scop) -> String {
    let mut s = String::new();
    for (k, class) in prog.classes.iter().enumerate() {
        for (p, part) in class.partitions.iter().enumerate() {
            let _ = writeln!(
                s,
                "static inline void {}(tf_graph *tf_g, const int *tf_st, const long *tf_key, const struct {} *tf_env)\n{{",
                spawn_fn(n, k, p),
                env_struct(n)
            );
            let _ = writeln!(
                s,
                "  tf_task_begin(tf_g, tf_st[{k}], tf_key, {}, tf_env);",
                task_fn(n, k)
            );
            for (c_type, name) in local_params(scop, &prog.row_lines) {
                let _ = writeln!(s, "  const {c_type} {name} = tf_env->{name}; (void){name};");
            }
            let dsts = names(DST_NAME, class.n_dims);
            for (dd, dst) in dsts.iter().enumerate() {
                let _ = writeln!(s, "  const long {dst} = tf_key[{dd}]; (void){dst};");
            }
            partition_inputs(&mut s, prog, part, "tf_", &dsts, 0);
            s.push_str("  tf_task_end(tf_g);\n}\n");
        }
    }
    s
}

/// The `task_input` calls of partition `part` for the tile whose coordinates are `key` (C
/// expressions), at indentation `depth + 1`.
fn partition_inputs(
    out: &mut String,
    prog: &TaskProgram,
    part: &crate::program::Partition,
    api: &str,
    key: &[String],
    depth: usize,
) {
    let pad = "  ".repeat(depth);
    for input in &part.inputs {
        let src_idx = input.src.index();
        let sd = prog.class(input.src).n_dims.max(1);
        match &input.kind {
            InputKind::Offset(d) => {
                let src: Vec<String> = key
                    .iter()
                    .zip(d)
                    .map(|(a, &dk)| match dk {
                        0 => a.clone(),
                        dk => format!("({a}) - ({dk})"),
                    })
                    .collect();
                let src = initializer_list(&src);
                let _ = writeln!(
                    out,
                    "{pad}  {{ const long tf_src[{sd}] = {{ {src} }}; {api}task_input(tf_g, tf_st[{src_idx}], tf_src); }} /* {} */",
                    input.dep
                );
            }
            InputKind::Barrier(b) => {
                let _ = writeln!(
                    out,
                    "{pad}  {{ const long tf_src[1] = {{ 0 }}; {api}task_input(tf_g, tf_st[{}], tf_src); }} /* {}: soft barrier B{b} */",
                    prog.classes.len() + b,
                    input.dep
                );
            }
            InputKind::Enumerated(sources) => {
                c_ast::stmt(out, sources, depth + 1, &mut |out, _name, args, depth| {
                    let pad = "  ".repeat(depth);
                    let _ = writeln!(
                        out,
                        "{pad}{{ const long tf_src[{sd}] = {{ {} }}; {api}task_input(tf_g, tf_st[{src_idx}], tf_src); }}",
                        key_list(args)
                    );
                });
            }
        }
    }
}

pub(crate) fn key_list(args: &[Expr]) -> String {
    initializer_list(&args.iter().map(c_ast::expr).collect::<Vec<_>>())
}

/// The elements of a C array initializer, `0` for none (C has no empty initializer list before
/// C23, and a key of no dimension is stored as one element).
pub(crate) fn initializer_list(items: &[String]) -> String {
    match items.is_empty() {
        true => "0".to_string(),
        false => items.join(", "),
    }
}

/// The SCoP's loop counters declared before it (`int i, j;` then `for (i = 0; ...)`): the control
/// program no longer uses them, and `-Wall` would call them unused, so it is preceded by
/// `(void)i;`. A counter that may be declared inside the region (`for (int i ...)`, `int i;`) is
/// not in scope there and is left out: any occurrence after a word (a type) or `,` counts as one.
/// Comments are not code: `/* Row i of L. */` declares nothing.
fn counters_declared_outside(scop: &Scop, region: &str) -> Vec<String> {
    let region = &blank_comments(region);
    let mut names: Vec<String> = Vec::new();
    for it in scop.statements.iter().flat_map(|st| &st.iterators) {
        if !names.contains(it) {
            names.push(it.clone());
        }
    }
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    names.retain(|name| {
        let mut found = false;
        for (at, _) in region.match_indices(name.as_str()) {
            let before = region[..at].chars().next_back();
            let after = region[at + name.len()..].chars().next();
            if before.is_some_and(is_word) || after.is_some_and(is_word) {
                continue; // part of a longer identifier
            }
            found = true;
            let prev = region[..at].trim_end().chars().next_back();
            if prev.is_some_and(|c| is_word(c) || c == ',') {
                return false;
            }
        }
        found
    });
    names
}

/// `text` with the characters of its comments (`/* */` and `//`) replaced by spaces.
fn blank_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let (open, close) = match (rest.find("/*"), rest.find("//")) {
            (Some(b), Some(l)) if l < b => (l, "\n"),
            (Some(b), _) => (b, "*/"),
            (None, Some(l)) => (l, "\n"),
            (None, None) => break,
        };
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let len = after
            .find(close)
            .map_or(after.len(), |e| if close == "*/" { e + 2 } else { e });
        out.extend(std::iter::repeat_n(' ', 2 + len));
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::blank_comments;

    #[test]
    fn comments_are_blanked_and_code_is_kept() {
        let text = "for (i = 0; /* Row i of L. */ i < n; i++) // j too\n  x = a / b; /*x*/";
        let blanked = blank_comments(text);
        // The comments are 17 ("/* Row i of L. */"), 8 ("// j too") and 5 ("/*x*/") characters.
        let expected = format!(
            "for (i = 0; {} i < n; i++) {}\n  x = a / b; {}",
            " ".repeat(17),
            " ".repeat(8),
            " ".repeat(5)
        );
        assert_eq!(blanked, expected);
        // An unterminated comment runs to the end.
        assert_eq!(blank_comments("a /* b"), "a     ");
    }
}
