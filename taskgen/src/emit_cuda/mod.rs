//! The CUDA target (`--target cuda`): CUDA kernels for the tiles (`out.cu`) and, in `out.c`, a
//! GPU control program per SCoP beside the unchanged CPU task program, chosen at run time.
//!
//! **Status: this code has not run on a GPU yet.** Its kernels are compiled with NVRTC (sm_80,
//! sm_90) and run on streamrt's emulated device (`TILEDFLOW_GPU=emulate`), where the programs
//! are verified bit for bit against the original; the real device path is untested.
//!
//! What runs where. For each task class (a nest) the task body is ISL's code for one tile; its
//! loops are over the dimensions of the nest's flat schedule. A loop that polyhedral proves
//! parallel once every outer dimension is fixed ([`polyhedral::parallel_loops`], asked for each
//! loop with the statements it runs) becomes a kernel; the schedule of this target puts the
//! point loops that carry no dependence outermost in a tile
//! (`polyhedral::ScheduleConfig::parallel_point_loops_outer`), so gemm's tile is one kernel with a
//! thread per `(i, j)` and the `k` loop inside. The loop's iterations are spread over the
//! threads (`blockIdx * blockDim + threadIdx`, a strided loop, so any grid and block size is
//! correct), and
//! when the loop's whole body is one loop over another parallel dimension, that one takes the
//! second thread dimension (`y` outside, `x` inside). Everything inside stays loops of one
//! thread. The code around such loops (sequential point loops that hold one, conditions) runs
//! on the host: each iteration of such a loop issues its launches on the task's CUDA stream, in
//! order. A sequential loop that holds no parallel loop (gramschmidt's sum of squares), or a
//! statement outside every loop, is one launch of one thread that runs it whole. No
//! `__syncthreads`, no shared memory, so the emulation runs the threads of a launch one after
//! another.
//!
//! Written scalars. The pipeline has already decided which written scalars are private to each
//! task (polyhedral's `privatize` module: one variable per task, or per iteration of a point
//! loop of the task, serves them, and the SCoP was scheduled with them expanded, so their
//! dependences no longer order other iterations). On the GPU:
//! - A scalar private to each task must also be private to each thread: a variable declared at
//!   the top of the innermost thread loop's body (for a one-thread launch, of the kernel), so one
//!   per thread and per iteration of that loop. [`polyhedral::thread_private`] decides it with
//!   ISL, per task class, from the kernels of the tile body (`kernel_roots`: their statements
//!   and the schedule dimensions one thread iteration fixes): every flow of the scalar lies in one
//!   kernel with equal coordinates down to the innermost thread dimension (one launch, one
//!   thread, one iteration), inside which its accesses keep their original order. deriche's
//!   `ym1` (a running value along a row, one thread per row) and symm's `temp2` (a sum over `k`
//!   for each `(i, j)` thread) pass. A scalar private to tasks but not to threads (its value
//!   flows from one launch or thread to another, as durbin's `sum` under `--fuse min`, set by
//!   one launch and read by the next) is reported in [`CudaPlan::not_thread_private`]: the
//!   driver then schedules the SCoP again without privatizing it, and it is shared (below), its
//!   dependences kept. The CPU task version in the same `out.c` then keeps it shared too.
//! - Its final value: the user's variable must hold, after the SCoP, the value of the last write
//!   in the original order (its liveness after the SCoP is not analysed). The statement instance
//!   that is that write ([`PrivateScalar::last_writes`], at most one for any parameter values)
//!   stores its thread's value in a device buffer of one element, which the host copies back to
//!   the variable at the exit (it was copied in from it at the entry, so a SCoP whose parameters
//!   make it write nothing leaves the variable unchanged).
//! - Every other written scalar (not privatized: its values cross iterations, like durbin's
//!   `alpha`, or it reads its value from before the SCoP) is shared: it lives in the device
//!   buffer of one element, copied in at the entry and out at the exit, and kernels name it
//!   through a reference to that element (`double &s = *tf_p_s;`). This is correct for the same
//!   reason as for arrays: its dependences are all in the schedule, so a loop whose iterations
//!   write it is not parallel (its accesses run on one thread, in order), launches that touch it
//!   are ordered on the task's stream, and tasks by the task graph. A statement outside every
//!   parallel loop (host side, between launches) that writes a scalar is a launch of one thread
//!   that writes the buffer, never the host's variable.
//!
//! For the GPU, the driver asks the scheduler not to cut band members that carry dependences
//! when the band has a member that carries none (`ScheduleConfig::whole_carrying_members`, with
//! the target's default tiles only): the free members become threads, and a value carried along
//! the others (deriche's rows, symm's sum over `k`) stays in one tile, and so in one thread, at
//! every size.
//!
//! What stays on the CPU (the whole SCoP, with a note in `-v` and as a comment in `out.c`): a SCoP
//! with a task class whose tile has loops but no parallel one (it would run as one thread; a
//! class without any loop, statements run once per tile, is a few one-thread launches; the note
//! names the shared scalars those tiles write, whose dependences may be the cause), or whose
//! statements need what a kernel cannot have (a macro without a definition to copy, a variable
//! named by a word of CUDA C++). A statement that calls a function of the user's compiles in
//! `out.c` but not in `out.cu`: NVRTC then fails at run time and the program falls back (the
//! runtime's notice).
//! Mixing CPU and GPU tiles in one SCoP would need copies between the two memories at each
//! dependence; that is left for later. Of the 30 PolyBench kernels, 28 run on the GPU path;
//! durbin and ludcmp stay on the CPU because some of their task classes have no parallel loop
//! (durbin: its `k` loop, whose inner loops the scheduler fuses and skews into one sequential
//! loop, except under `--fuse min`, where durbin runs on the GPU; ludcmp: forward and back
//! substitution, and the LU nest, whose `w` is expanded over `i` only, being shared with the
//! other two nests).
//!
//! Memory. At the entry of a SCoP on the GPU, each array it touches is copied in, only its slab
//! `[lo, hi]` of the outermost index ([`polyhedral::array_slabs`], evaluated from the parameters
//! at run time); at the exit the arrays it writes are copied back and everything is freed. A
//! kernel sees an array through `tf_view` (pointer, `lo`, inner dimensions), so statements keep
//! their subscripts `A[i][j]` unchanged.
//!
//! Host side: the GPU control program spawns the tiles in the order of the tiled schedule with
//! the inputs of the tasks target (`emit_c::spawns`, shared), as `tf_gpu_task_begin`, `_input`,
//! the task's launches, `_end` of streamrt's GPU launch graph; soft barriers are tasks without
//! launches. A `.cu` file's kernels are listed in `out.c` (`tf_cuda_names`, with the weak
//! emulation entry points `tf_emu_<kernel>_<tag>` defined when `out.cu` is built with
//! `-DTF_CUDA_EMULATE`; the tag keeps the emulated kernels of several sources of one program
//! apart, see `emulated_names`) and loaded once by a constructor (`tf_gpu_load`).
//!
//! Kernel parameters, in this order (the host's argument lists reproduce it): the tile key
//! `tf_k<d>` (`long`), the host loop iterators in scope (`long`), the SCoP's parameters (their C
//! types), per array its device pointer, `lo` and inner dimensions (`long`), the read-only
//! scalars by value, and per written scalar the device pointer of its one-element buffer
//! (`tf_p_<name>`), in the order of the SCoP's arrays.
//!
//! Coarsening. A launch costs about 5 us, so a launch must carry many threads. First, the
//! scheduler is asked for outer coincidence for this target (the `schedule` module): a time loop
//! then stays outside a parallel space band instead of being skewed into it, and each time step
//! is one launch over the whole space tile, not one launch per point. Second, when no tile
//! sizes are given, the driver tiles every band member of a SCoP compiled for this target by
//! [`CUDA_TILE`] (256) instead of the CPU default (except the members not cut, above), so a
//! parallel point loop has up to 256 iterations and two nested ones up to 64K threads per launch; the problem size caps it (a
//! tile never exceeds the iteration domain). Independent tiles are not yet merged into one
//! launch. Grid size: [`BLOCK`] threads a block (`BLOCK / BLOCK_Y` along `x` and [`BLOCK_Y`]
//! along `y` for two dimensions), and as many blocks as the loop has iterations, computed by the
//! host from the loop's bounds where it can (see `grid_blocks`); this affects speed only, since
//! the loops are strided.
//!
//! Bit-exact results on a device need NVRTC's `--fmad=false` (the original is compiled with
//! `-ffp-contract=off`), which streamrt passes (`streamrt::nvrtc::KERNEL_OPTIONS`, also used by
//! the NVRTC tests); the emulated build is compiled with `-ffp-contract=off` too.
//!
//! Files: `plan` decides, before emission, whether a SCoP runs on the GPU and with what
//! ([`plan`], [`CudaPlan`]); this one writes the kernels and the host code.

mod plan;

use plan::{accesses, host_loop, inner_thread_loop, is_parallel, kernel_scope, statement_index};
pub use plan::{plan, CudaPlan, GpuScop};

use crate::c_ast;
use crate::emit_c::{self, CudaScop, EmitOptions, ScopCode};
use crate::emit_omp::{canonical_bound, mentions_id};
use crate::private::PrivateScalar;
use crate::program::{names, TaskProgram, BODY_ITER, KEY_NAME};
use polyhedral::{Ast, BodyLoop, Expr};
use scop_ir::{ArrayId, Scop, SourceFile};
use std::fmt::Write;

/// The tile size of every band member when the cuda target chooses (see the module doc).
pub const CUDA_TILE: i64 = 256;
/// Threads of a block along `x`.
pub const BLOCK: u32 = 128;
/// Threads of a block along `y` when two loops are mapped to threads (`x` then has 32).
pub const BLOCK_Y: u32 = 8;
/// The assumed iterations of a parallel loop below the tiled band whose bounds the host cannot
/// compute (for the grid size only).
pub const OTHER_EXTENT: i64 = 256;
/// CUDA's limits on the grid dimensions `x` (2^31 - 1, kept lower) and `y`.
const MAX_GRID_X: u32 = 1 << 20;
const MAX_GRID_Y: u32 = 65535;

/// The header of the emulated build: `g++ -x c++ -DTF_CUDA_EMULATE -include tf_cuda_emu.h`.
pub const EMU_H: &str = include_str!("../../../streamrt/include/tf_cuda_emu.h");

/// Writes both outputs: `out.c` (the input with every SCoP replaced, GPU and CPU versions) and
/// `out.cu` (the kernels). `plans[i]` is the plan of `scops[i]`; `cu_name` is the `.cu` file's
/// name, for comments.
pub fn emit(
    file: &SourceFile,
    scops: &[ScopCode<'_>],
    plans: &[CudaPlan],
    opts: &EmitOptions,
    cu_name: &str,
) -> (String, String) {
    let mut kernels: Vec<Kernel> = Vec::new();
    let mut gpu_scops: Vec<CudaScop> = Vec::with_capacity(scops.len());
    for (n, (sc, plan)) in scops.iter().zip(plans).enumerate() {
        gpu_scops.push(match &plan.gpu {
            Ok(gpu) => CudaScop {
                host: Some(scop_host(n, sc.scop, sc.program, gpu, &mut kernels)),
                note: None,
            },
            Err(why) => CudaScop {
                host: None,
                note: Some(why.clone()),
            },
        });
    }
    let codes: Vec<ScopCode<'_>> = scops
        .iter()
        .zip(&gpu_scops)
        .map(|(sc, g)| ScopCode {
            cuda: Some(g),
            ..*sc
        })
        .collect();
    let tag = fnv1a(&cu_text(file, scops, &kernels, ""));
    let cu = cu_text(file, scops, &kernels, &emulated_names(&kernels, tag));
    let prelude = prelude(&cu, &kernels, tag, cu_name);
    let c = emit_c::emit_file_with(file, &codes, opts, Some(&prelude));
    (c, cu)
}

/// One kernel: its name and its definition and emulation launcher (CUDA C++).
struct Kernel {
    name: String,
    text: String,
    launcher: String,
}

/// A kernel parameter: C++ type and name.
struct Param {
    ty: String,
    name: String,
}

/// The kernel parameters common to every kernel of SCoP `scop`, and the host expressions that
/// give their values (addresses taken for `tf_gpu_launch`).
fn scop_params(scop: &Scop) -> Vec<(Param, String)> {
    let mut out = Vec::new();
    for p in &scop.params {
        out.push((
            Param {
                ty: p.c_type.clone(),
                name: p.name.clone(),
            },
            p.name.clone(),
        ));
    }
    for a in &scop.arrays {
        if a.rank == 0 && a.written {
            out.push((
                Param {
                    ty: format!("{} *", a.elem_type),
                    name: format!("tf_p_{}", a.name),
                },
                format!("tf_dev_{}", a.name),
            ));
            continue;
        }
        if a.rank == 0 {
            out.push((
                Param {
                    ty: a.elem_type.clone(),
                    name: a.name.clone(),
                },
                a.name.clone(),
            ));
            continue;
        }
        out.push((
            Param {
                ty: format!("{} *", a.elem_type),
                name: format!("tf_p_{}", a.name),
            },
            format!("tf_dev_{}", a.name),
        ));
        out.push((
            Param {
                ty: "long".into(),
                name: format!("tf_lo_{}", a.name),
            },
            format!("tf_lo_{}", a.name),
        ));
        for d in 0..a.rank - 1 {
            out.push((
                Param {
                    ty: "long".into(),
                    name: format!("tf_d_{}{d}", a.name),
                },
                format!("tf_dim_{}[{d}]", a.name),
            ));
        }
    }
    out
}

/// The GPU control program of SCoP `n`: copies in, the launch graph, copies out.
fn scop_host(
    n: usize,
    scop: &Scop,
    prog: &TaskProgram,
    gpu: &GpuScop,
    kernels: &mut Vec<Kernel>,
) -> String {
    let mut s = String::new();
    let pad = "      ";
    for a in scop.arrays.iter().filter(|a| a.rank > 0) {
        let name = &a.name;
        let _ = writeln!(s, "{pad}long tf_lo_{name} = 0, tf_hi_{name} = -1;");
        if let Some(Some(slab)) = gpu.slabs.get(a.id.index()) {
            for (bound, ast) in [("lo", &slab.lo), ("hi", &slab.hi)] {
                let _ = writeln!(s, "{pad}{{");
                c_ast::stmt(&mut s, ast, 4, &mut |out, _name, args, depth| {
                    let v = args.first().map(c_ast::expr).unwrap_or_else(|| "0".into());
                    let _ = writeln!(out, "{}tf_{bound}_{name} = {v};", "  ".repeat(depth));
                });
                let _ = writeln!(s, "{pad}}}");
            }
        }
        let _ = writeln!(
            s,
            "{pad}if (tf_hi_{name} < tf_lo_{name}) {{ tf_lo_{name} = 0; tf_hi_{name} = -1; }}"
        );
        if a.rank > 1 {
            let dims: Vec<String> = (1..a.rank)
                .map(|d| {
                    let outer = format!("{name}{}", "[0]".repeat(d));
                    let inner = format!("{name}{}", "[0]".repeat(d + 1));
                    format!("(long)(sizeof({outer}) / sizeof({inner}))")
                })
                .collect();
            let _ = writeln!(
                s,
                "{pad}const long tf_dim_{name}[{}] = {{ {} }};",
                a.rank - 1,
                dims.join(", ")
            );
        }
        let _ = writeln!(
            s,
            "{pad}void *tf_dev_{name} = tf_gpu_copy_in(tf_gpu_mod, (const void *)&{name}[tf_lo_{name}], (size_t)(tf_hi_{name} - tf_lo_{name} + 1) * sizeof({name}[0]));"
        );
    }
    // Written scalars: a buffer of one element, holding the user's value first (a shared scalar
    // may read it) and the final value at the end.
    for a in scop.arrays.iter().filter(|a| a.rank == 0 && a.written) {
        let _ = writeln!(
            s,
            "{pad}void *tf_dev_{n} = tf_gpu_copy_in(tf_gpu_mod, (const void *)&{n}, sizeof({n}));",
            n = a.name
        );
    }
    let common = scop_params(scop);
    // Each class's launches, printed once (the tile enumeration may spawn a class from several
    // places); the kernels they use are numbered in order through the file.
    let mut class_host = Vec::with_capacity(prog.classes.len());
    for (k, class) in prog.classes.iter().enumerate() {
        let mut out = String::new();
        out.push_str("          {\n");
        for (d, key) in names(KEY_NAME, class.n_dims).iter().enumerate() {
            let _ = writeln!(
                out,
                "            const long {key} = tf_key[{d}]; (void){key};"
            );
        }
        let mut ctx = HostCtx {
            n,
            k,
            scop,
            class_dims: class.n_dims,
            tile_sizes: &class.tile_sizes,
            parallel: &gpu.parallel[k],
            common: &common,
            thread_local: &gpu.thread_local,
            host_iters: Vec::new(),
            first: kernels.len(),
        };
        host(&mut out, &class.body, 6, &mut ctx, kernels);
        out.push_str("          }\n");
        class_host.push(out);
    }
    let launches = |k: usize, _depth: usize| -> String { class_host[k].clone() };
    s.push_str(&emit_c::spawns(n, prog, Some(&launches)));
    for a in scop.arrays.iter().filter(|a| a.rank == 0 && a.written) {
        let _ = writeln!(
            s,
            "{pad}tf_gpu_copy_out(tf_gpu_mod, (void *)&{n}, tf_dev_{n}, sizeof({n}));",
            n = a.name
        );
    }
    for a in scop.arrays.iter().filter(|a| a.rank > 0) {
        let name = &a.name;
        if a.written {
            let _ = writeln!(
                s,
                "{pad}tf_gpu_copy_out(tf_gpu_mod, (void *)&{name}[tf_lo_{name}], tf_dev_{name}, (size_t)(tf_hi_{name} - tf_lo_{name} + 1) * sizeof({name}[0]));"
            );
        }
    }
    for a in scop.arrays.iter().filter(|a| a.rank > 0 || a.written) {
        let _ = writeln!(s, "{pad}tf_gpu_free(tf_gpu_mod, tf_dev_{});", a.name);
    }
    s
}

/// What the host code of one tile needs to know.
struct HostCtx<'a> {
    n: usize,
    k: usize,
    scop: &'a Scop,
    class_dims: usize,
    tile_sizes: &'a [i64],
    parallel: &'a [(BodyLoop, bool)],
    common: &'a [(Param, String)],
    /// The written scalars each thread keeps in a variable of its own.
    thread_local: &'a [PrivateScalar],
    /// Iterators of the enclosing host loops.
    host_iters: Vec<String>,
    /// The index of the class's first kernel.
    first: usize,
}

/// Prints the host side of a tile body: sequential loops and conditions stay, each parallel loop
/// (or lone statement) becomes a kernel, pushed to the file's `kernels`, and its launch.
fn host(
    out: &mut String,
    ast: &Ast,
    depth: usize,
    ctx: &mut HostCtx<'_>,
    kernels: &mut Vec<Kernel>,
) {
    let pad = "  ".repeat(depth);
    match ast {
        Ast::Block(items) => {
            for item in items {
                host(out, item, depth, ctx, kernels);
            }
        }
        Ast::For {
            iter,
            init,
            cond,
            inc,
            body,
        } if host_loop(iter, body, ctx.parallel) => {
            let _ = writeln!(
                out,
                "{pad}for (long {iter} = {}; {}; {iter} += {}) {{",
                c_ast::expr(init),
                c_ast::expr(cond),
                c_ast::expr(inc)
            );
            ctx.host_iters.push(iter.clone());
            host(out, body, depth + 1, ctx, kernels);
            ctx.host_iters.pop();
            let _ = writeln!(out, "{pad}}}");
        }
        Ast::If { cond, then, els } => {
            let _ = writeln!(out, "{pad}if ({}) {{", c_ast::expr(cond));
            host(out, then, depth + 1, ctx, kernels);
            if let Some(e) = els {
                let _ = writeln!(out, "{pad}}} else {{");
                host(out, e, depth + 1, ctx, kernels);
            }
            let _ = writeln!(out, "{pad}}}");
        }
        Ast::Kernel(k) => host(out, &k.fallback, depth, ctx, kernels),
        Ast::For { .. } | Ast::User { .. } => {
            let index = kernels.len();
            let name = format!("tf_scop{}_n{}_k{}", ctx.n, ctx.k, index - ctx.first);
            let (kernel, grid, block) = kernel(&name, ast, ctx);
            kernels.push(kernel);
            let mut values: Vec<(String, String)> = names(KEY_NAME, ctx.class_dims)
                .into_iter()
                .map(|k| ("long".to_string(), k))
                .collect();
            values.extend(
                ctx.host_iters
                    .iter()
                    .map(|i| ("long".to_string(), i.clone())),
            );
            values.extend(ctx.common.iter().map(|(p, v)| (p.ty.clone(), v.clone())));
            let args: Vec<String> = values
                .iter()
                .map(|(_, v)| format!("(void *)&{v}"))
                .collect();
            let sizes: Vec<String> = values.iter().map(|(_, v)| format!("sizeof({v})")).collect();
            let _ = writeln!(out, "{pad}{{ /* kernel {index}: {name} */");
            let _ = writeln!(
                out,
                "{pad}  void *tf_args[{}] = {{ {} }};",
                args.len().max(1),
                if args.is_empty() {
                    "0".into()
                } else {
                    args.join(", ")
                }
            );
            let _ = writeln!(
                out,
                "{pad}  const size_t tf_sizes[{}] = {{ {} }};",
                sizes.len().max(1),
                if sizes.is_empty() {
                    "0".into()
                } else {
                    sizes.join(", ")
                }
            );
            let _ = writeln!(
                out,
                "{pad}  const unsigned tf_grid[3] = {{ {}, {}, 1 }}, tf_block[3] = {{ {}, {}, 1 }};",
                grid[0], grid[1], block[0], block[1]
            );
            let _ = writeln!(
                out,
                "{pad}  tf_gpu_launch(tf_g, {index}, tf_grid, tf_block, {}, tf_args, tf_sizes);",
                values.len()
            );
            let _ = writeln!(out, "{pad}}}");
        }
    }
}

/// The kernel for `ast` (a parallel loop, or a sequential loop or statement run by one thread)
/// and its launch geometry.
fn kernel(name: &str, ast: &Ast, ctx: &HostCtx<'_>) -> (Kernel, [String; 2], [u32; 2]) {
    let scop = ctx.scop;
    let mut params: Vec<Param> = names(KEY_NAME, ctx.class_dims)
        .into_iter()
        .map(|k| Param {
            ty: "long".into(),
            name: k,
        })
        .collect();
    params.extend(ctx.host_iters.iter().map(|i| Param {
        ty: "long".into(),
        name: i.clone(),
    }));
    params.extend(ctx.common.iter().map(|(p, _)| Param {
        ty: p.ty.clone(),
        name: p.name.clone(),
    }));
    let mut t = String::new();
    let list: Vec<String> = params
        .iter()
        .map(|p| format!("{} {}", p.ty, p.name))
        .collect();
    let _ = writeln!(
        t,
        "extern \"C\" __global__ void {name}({})",
        list.join(", ")
    );
    t.push_str("{\n");
    let unused: Vec<String> = params
        .iter()
        .filter(|p| !p.name.starts_with("tf_p_"))
        .map(|p| format!("(void){};", p.name))
        .collect();
    let _ = writeln!(t, "  {}", unused.join(" "));
    for a in scop.arrays.iter().filter(|a| a.rank > 0) {
        let dims: Vec<String> = (0..a.rank - 1)
            .map(|d| format!("tf_d_{}{d}", a.name))
            .collect();
        let dims = emit_c::initializer_list(&dims);
        let _ = writeln!(
            t,
            "  const long tf_dims_{n}[] = {{ {dims} }};\n  const tf_view<{ty}, {r}> {n}(tf_p_{n}, tf_lo_{n}, tf_dims_{n}); (void){n};",
            n = a.name,
            ty = a.elem_type,
            r = a.rank
        );
    }
    // Written scalars: a shared one is the buffer's element; a thread-local one is a variable
    // of each iteration of the innermost thread loop (declared below), and the instance of its
    // last write stores its value in the buffer.
    let run = kernel_scope(ast, ctx.parallel).statements;
    let runs = |id: ArrayId| {
        run.iter()
            .filter_map(|s| statement_index(s))
            .any(|k| accesses(scop, k, id))
    };
    let mut locals = String::new();
    for a in scop
        .arrays
        .iter()
        .filter(|a| a.rank == 0 && a.written && runs(a.id))
    {
        match ctx.thread_local.iter().any(|p| p.array == a.id) {
            true => locals.push_str(&format!("{} {n} = 0; (void){n}; ", a.elem_type, n = a.name)),
            false => {
                let _ = writeln!(
                    t,
                    "  {} &{n} = *tf_p_{n}; (void){n};",
                    a.elem_type,
                    n = a.name
                );
            }
        }
    }
    let declare = |t: &mut String, depth: usize| {
        if !locals.is_empty() {
            let _ = writeln!(t, "{}{}", "  ".repeat(depth), locals.trim_end());
        }
    };
    // Every written scalar is named as it is (a local variable or a reference), never `(*s)`.
    let bare: Vec<PrivateScalar> = scop
        .arrays
        .iter()
        .filter(|a| a.rank == 0 && a.written)
        .map(|a| PrivateScalar {
            array: a.id,
            copy_out: Vec::new(),
            last_writes: Vec::new(),
        })
        .collect();
    let mut user = |out: &mut String, sname: &str, args: &[Expr], depth: usize| {
        emit_c::statement(out, scop, &bare, sname, args, depth, None);
        for p in ctx.thread_local {
            last_write(out, p, &scop.array(p.array).name, sname, args, depth);
        }
    };
    let (grid, block) = match ast {
        Ast::For {
            iter,
            init,
            cond,
            inc,
            body,
        } if is_parallel(iter, body, ctx.parallel) => {
            // A second parallel loop when it is the whole body.
            match inner_thread_loop(body, ctx.parallel) {
                Some(Ast::For {
                    iter: i2,
                    init: init2,
                    cond: cond2,
                    inc: inc2,
                    body: body2,
                }) => {
                    thread_loop(&mut t, 1, "y", iter, init, cond, inc);
                    thread_loop(&mut t, 2, "x", i2, init2, cond2, inc2);
                    declare(&mut t, 3);
                    c_ast::stmt(&mut t, body2, 3, &mut user);
                    t.push_str("    }\n  }\n");
                    let bx = BLOCK / BLOCK_Y;
                    let gx = grid_blocks(
                        i2,
                        init2,
                        cond2,
                        inc2,
                        Some(iter.as_str()),
                        bx,
                        MAX_GRID_X,
                        ctx,
                    );
                    let gy = grid_blocks(iter, init, cond, inc, None, BLOCK_Y, MAX_GRID_Y, ctx);
                    ([gx, gy], [bx, BLOCK_Y])
                }
                _ => {
                    thread_loop(&mut t, 1, "x", iter, init, cond, inc);
                    declare(&mut t, 2);
                    c_ast::stmt(&mut t, body, 2, &mut user);
                    t.push_str("  }\n");
                    (
                        [
                            grid_blocks(iter, init, cond, inc, None, BLOCK, MAX_GRID_X, ctx),
                            "1".into(),
                        ],
                        [BLOCK, 1],
                    )
                }
            }
        }
        other => {
            t.push_str("  if (blockIdx.x == 0 && threadIdx.x == 0 && blockIdx.y == 0 && threadIdx.y == 0) {\n");
            declare(&mut t, 2);
            c_ast::stmt(&mut t, other, 2, &mut user);
            t.push_str("  }\n");
            (["1".to_string(), "1".to_string()], [1, 1])
        }
    };
    t.push_str("}\n");
    let mut l = String::new();
    let _ = writeln!(l, "extern \"C\" void tf_emu_{name}(const unsigned *tf_grid, const unsigned *tf_block, void **tf_args)");
    l.push_str("{\n");
    for (j, p) in params.iter().enumerate() {
        let _ = writeln!(
            l,
            "  {ty} {n} = *({ty} *)tf_args[{j}];",
            ty = p.ty,
            n = p.name
        );
    }
    let call: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    let _ = writeln!(
        l,
        "  tf_emu_run(tf_grid, tf_block, [&] {{ {name}({}); }});",
        call.join(", ")
    );
    l.push_str("}\n");
    (
        Kernel {
            name: name.to_string(),
            text: t,
            launcher: l,
        },
        grid,
        block,
    )
}

/// After an instance of statement `stmt` (coordinates `args`): when it is the last write of the
/// thread-local scalar `p` (called `name`), its value goes to the scalar's buffer, which the host
/// copies back to the user's variable.
fn last_write(
    out: &mut String,
    p: &PrivateScalar,
    name: &str,
    stmt: &str,
    args: &[Expr],
    depth: usize,
) {
    for (_, points) in p.last_writes.iter().filter(|(s, _)| s == stmt) {
        let pad = "  ".repeat(depth);
        let _ = writeln!(
            out,
            "{pad}{{ /* the last write of {name}: its value is the one left after the SCoP */"
        );
        c_ast::stmt(out, points, depth + 1, &mut |out, _name, coords, depth| {
            let pad = "  ".repeat(depth);
            let same: Vec<String> = args
                .iter()
                .zip(coords)
                .map(|(a, c)| format!("({}) == ({})", c_ast::expr(a), c_ast::expr(c)))
                .collect();
            match same.is_empty() {
                true => {
                    let _ = writeln!(out, "{pad}*tf_p_{name} = {name};");
                }
                false => {
                    let _ = writeln!(
                        out,
                        "{pad}if ({}) *tf_p_{name} = {name};",
                        same.join(" && ")
                    );
                }
            }
        });
        let _ = writeln!(out, "{pad}}}");
    }
}

/// `for (iter = init + tid * inc; cond; iter += nthreads * inc)` along thread dimension `dim`.
fn thread_loop(
    t: &mut String,
    depth: usize,
    dim: &str,
    iter: &str,
    init: &Expr,
    cond: &Expr,
    inc: &Expr,
) {
    let pad = "  ".repeat(depth);
    let _ = writeln!(
        t,
        "{pad}for (long {iter} = {} + (long)(blockIdx.{dim} * blockDim.{dim} + threadIdx.{dim}) * {inc}; {}; {iter} += (long)(gridDim.{dim} * blockDim.{dim}) * {inc}) {{",
        c_ast::expr(init),
        c_ast::expr(cond),
        inc = c_ast::expr(inc)
    );
}

/// The number of blocks for the thread loop over `iter`, as a host expression: from its bounds
/// when the loop is `iter <= ub` or `iter < ub` with step 1 and neither bound mentions
/// `thread_outer` (the other thread loop's iterator, unknown on the host), so that a small
/// problem launches few blocks; otherwise from the tile size of a point dimension of the band,
/// or [`OTHER_EXTENT`] below it. At most `cap` (CUDA's limit on that grid dimension); any number
/// is correct since the loop is strided.
#[allow(clippy::too_many_arguments)]
fn grid_blocks(
    iter: &str,
    init: &Expr,
    cond: &Expr,
    inc: &Expr,
    thread_outer: Option<&str>,
    per_block: u32,
    cap: u32,
    ctx: &HostCtx<'_>,
) -> String {
    let known = |e: &Expr| match thread_outer {
        Some(o) => !mentions_id(e, o),
        None => true,
    };
    match canonical_bound(iter, cond, inc) {
        Some((op, ub)) if known(init) && known(ub) => {
            let last = if op == "<=" {
                c_ast::expr(ub)
            } else {
                format!("({} - 1)", c_ast::expr(ub))
            };
            format!(
                "tf_gpu_blocks({last} - {} + 1, {per_block}, {cap})",
                c_ast::expr(init)
            )
        }
        _ => {
            let d = iter
                .strip_prefix(BODY_ITER)
                .and_then(|d| d.parse::<usize>().ok())
                .unwrap_or(usize::MAX);
            let p = ctx.class_dims;
            let cut = ctx
                .tile_sizes
                .iter()
                .filter(|&&t| t < polyhedral::WHOLE_LOOP)
                .max();
            let extent = match (d >= p && d < 2 * p, cut) {
                (true, Some(&t)) => t,
                _ => OTHER_EXTENT,
            };
            format!("tf_gpu_blocks({extent}, {per_block}, {cap})")
        }
    }
}

/// Device helpers of `out.cu`: the C helpers of printed expressions and the array view.
const CU_HELPERS: &str = r#"__host__ __device__ static inline long tf_floord(long a, long b) { long q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
__host__ __device__ static inline long tf_min(long a, long b) { return a < b ? a : b; }
__host__ __device__ static inline long tf_max(long a, long b) { return a > b ? a : b; }

/* A multi-dimensional array seen from a kernel: elements p[0..] hold rows lo, lo + 1, ... of the
 * outermost index; d[] are the inner dimensions. A[i][j] works as in C. */
template <typename T, int R> struct tf_view {
  T *p; long lo; long d[R - 1];
  __host__ __device__ tf_view(T *p_, long lo_, const long *d_) : p(p_), lo(lo_) { for (int k = 0; k < R - 1; k++) d[k] = d_[k]; }
  __host__ __device__ tf_view<T, R - 1> operator[](long i) const {
    long stride = 1;
    for (int k = 0; k < R - 1; k++) stride *= d[k];
    return tf_view<T, R - 1>(p + (i - lo) * stride, 0, d + 1);
  }
};
template <typename T> struct tf_view<T, 1> {
  T *p; long lo;
  __host__ __device__ tf_view(T *p_, long lo_, const long *) : p(p_), lo(lo_) {}
  __host__ __device__ T &operator[](long i) const { return p[i - lo]; }
};
"#;

/// The names of the emulated build. Its kernels and launchers are host functions with external
/// linkage, and every kernel file names its kernels `tf_scop<n>_n<k>_k<i>`: two sources of one
/// program (linked by `tiledflow-cc --tiledflow-target=cuda`) would define the same symbols. So
/// under `TF_CUDA_EMULATE` each name gets the suffix `_<tag>`, `tag` a hash of the kernel file's
/// text without these lines (the same text, the same kernels); `out.c` names the launchers so.
/// NVRTC's names stay as they are (each file is a module of its own on the device).
fn emulated_names(kernels: &[Kernel], tag: u64) -> String {
    if kernels.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "#ifdef TF_CUDA_EMULATE\n/* Linked with other kernel files: names of this file's own. */\n",
    );
    for k in kernels {
        let _ = writeln!(
            s,
            "#define {n} {n}_{tag:016x}\n#define tf_emu_{n} tf_emu_{n}_{tag:016x}",
            n = k.name
        );
    }
    s.push_str("#endif\n");
    s
}

/// FNV-1a, 64 bits: a stable hash (the same in every build of tiledflow) for [`emulated_names`].
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The text of `out.cu`; `emulated_names` goes before the kernels.
fn cu_text(
    file: &SourceFile,
    scops: &[ScopCode<'_>],
    kernels: &[Kernel],
    emulated_names: &str,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/* tiledflow: CUDA kernels of {} ({} kernels).",
        file.path.replace("*/", "* /"),
        kernels.len()
    );
    s.push_str(" * The host program loads this text with NVRTC (no #include: NVRTC has no system headers).\n");
    s.push_str(
        " * Emulated build: g++ -x c++ -DTF_CUDA_EMULATE -include tf_cuda_emu.h -c out.cu */\n",
    );
    let mut macros: Vec<&str> = Vec::new();
    for sc in scops {
        for m in scop_macros(sc.scop) {
            if !macros.contains(&m) {
                macros.push(m);
            }
        }
    }
    for m in macros {
        s.push_str(m);
        s.push('\n');
    }
    s.push_str(emulated_names);
    s.push_str(CU_HELPERS);
    for k in kernels {
        s.push('\n');
        s.push_str(&k.text);
    }
    s.push_str("\n#ifdef TF_CUDA_EMULATE\n");
    for k in kernels {
        s.push_str(&k.launcher);
    }
    s.push_str("#endif\n");
    s
}

/// The `#define` lines the statements of `scop` need.
fn scop_macros(scop: &Scop) -> Vec<&str> {
    scop.macros.iter().map(|m| m.define.as_str()).collect()
}

/// The file-scope part of `out.c`: the kernel source, names, emulation entry points, the loaded
/// module. Empty when no SCoP is on the GPU.
fn prelude(cu: &str, kernels: &[Kernel], tag: u64, cu_name: &str) -> String {
    let mut s = String::new();
    if kernels.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "/* The kernels ({}), compiled at run time by NVRTC. */",
        cu_name.replace("*/", "* /")
    );
    s.push_str("static const char tf_cuda_src[] =\n");
    for line in cu.lines() {
        let _ = writeln!(s, "  \"{}\\n\"", emit_c::c_string(line));
    }
    s.push_str("  ;\n");
    let quoted: Vec<String> = kernels.iter().map(|k| format!("\"{}\"", k.name)).collect();
    let _ = writeln!(
        s,
        "static const char *const tf_cuda_names[] = {{ {} }};",
        quoted.join(", ")
    );
    for k in kernels {
        let _ = writeln!(s, "extern void tf_emu_{}_{tag:016x}(const unsigned *grid, const unsigned *block, void **args) __attribute__((weak));", k.name);
    }
    let emus: Vec<String> = kernels
        .iter()
        .map(|k| format!("tf_emu_{}_{tag:016x}", k.name))
        .collect();
    let _ = writeln!(
        s,
        "static const tf_gpu_emu_fn tf_cuda_emu[] = {{ {} }};",
        emus.join(", ")
    );
    s.push_str("static tf_gpu *tf_gpu_mod;\n");
    s.push_str(GRID_HELPER);
    let _ = writeln!(
        s,
        "__attribute__((constructor)) static void tf_gpu_start(void) {{ tf_gpu_mod = tf_gpu_load(tf_cuda_src, tf_cuda_names, tf_cuda_emu, {}); }}",
        kernels.len()
    );
    s
}

/// Blocks of `per` threads for `n` iterations, at least 1 and at most `cap`.
const GRID_HELPER: &str = "static inline unsigned tf_gpu_blocks(long n, long per, long cap) { long b = n < 1 ? 1 : (n + per - 1) / per; return (unsigned)(b > cap ? cap : b); }\n";
