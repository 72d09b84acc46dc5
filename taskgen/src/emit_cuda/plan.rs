//! Planning the GPU side of a SCoP before emission: whether it runs on the GPU ([`plan`]), and
//! with what: the parallel loops of each task body, the slab of each array to copy, and the
//! written scalars that live in a variable of each thread (see the parent module's doc for the
//! rules). The helpers that read a task body's loops (which are kernels, which run on the host)
//! serve the emitter too.

use crate::private::PrivateScalar;
use crate::program::{TaskProgram, BODY_ITER};
use polyhedral::{ArraySlab, Ast, BodyLoop, Dependences, KernelScope, NestId, TiledSchedule};
use scop_ir::{AccessKind, ArrayId, Scop};
use std::fmt::Write;

/// Words of CUDA C++ (keywords that C lacks, built-in variables and types) that a C variable
/// may be called: such a SCoP stays on the CPU.
pub(super) const CXX_RESERVED: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "bitand",
    "bitor",
    "bool",
    "catch",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "delete",
    "dynamic_cast",
    "explicit",
    "export",
    "false",
    "friend",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "reinterpret_cast",
    "requires",
    "static_assert",
    "static_cast",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typeid",
    "typename",
    "using",
    "virtual",
    "wchar_t",
    "xor",
    "xor_eq",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "dim3",
    "uint3",
];

/// Whether a SCoP runs on the GPU, decided before emission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaPlan {
    /// `Ok`: on the GPU; `Err`: why the SCoP stays a CPU task program.
    pub gpu: Result<GpuScop, String>,
    /// The scalars private to each task but not to each GPU thread, which alone keep the SCoP
    /// on the CPU: scheduled again with their dependences kept (not privatized), they would be
    /// shared, in a buffer of one element.
    pub not_thread_private: Vec<ArrayId>,
}

/// The polyhedral facts the GPU code needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuScop {
    /// Per nest: the loops of its task body, each with whether it is parallel once the outer
    /// dimensions are fixed.
    pub parallel: Vec<Vec<(BodyLoop, bool)>>,
    /// Per array of the SCoP: its accessed slab of the outermost index.
    pub slabs: Vec<Option<ArraySlab>>,
    /// The written scalars that live in a variable of each GPU thread (the others written are
    /// shared, in a buffer of one element), with the code of their last write.
    pub thread_local: Vec<PrivateScalar>,
}

/// Decides whether `scop` runs on the GPU: `expanded`, `deps`, `sched`, `program` and
/// `private` (the scalars private to each task) are the pipeline's (with private scalars
/// expanded), `scop` the SCoP as written.
pub fn plan(
    scop: &Scop,
    expanded: &Scop,
    deps: &Dependences,
    sched: &TiledSchedule,
    program: &TaskProgram,
    private: &[PrivateScalar],
) -> crate::Result<CudaPlan> {
    let names = scop
        .params
        .iter()
        .map(|p| &p.name)
        .chain(scop.arrays.iter().map(|a| &a.name));
    if let Some(name) = names
        .into_iter()
        .find(|n| CXX_RESERVED.contains(&n.as_str()))
    {
        let why = format!("the variable `{name}` is a reserved word of CUDA C++, in which the kernels are written");
        return Ok(CudaPlan {
            gpu: Err(why),
            not_thread_private: Vec::new(),
        });
    }
    if let Some(m) = scop.undefined_macros.first() {
        let why = format!(
            "its statements use the macro `{}`, whose definition cannot be copied into the kernels",
            m.name
        );
        return Ok(CudaPlan {
            gpu: Err(why),
            not_thread_private: Vec::new(),
        });
    }
    let mut parallel = Vec::with_capacity(program.classes.len());
    for (k, class) in program.classes.iter().enumerate() {
        let loops = polyhedral::body_loops(&class.body, BODY_ITER);
        let flags = polyhedral::parallel_loops(expanded, deps, sched, NestId::new(k), &loops)?;
        parallel.push(loops.into_iter().zip(flags).collect::<Vec<_>>());
    }
    // A class without any loop (statements run once per tile, durbin's `beta = 1`) is a launch of
    // one thread per statement: no serial work is moved to the GPU, so it does not count.
    let serial: Vec<usize> = (0..program.classes.len())
        .filter(|&k| !parallel[k].is_empty() && !parallel[k].iter().any(|(_, p)| *p))
        .collect();
    if !serial.is_empty() {
        let classes: Vec<&str> = serial
            .iter()
            .map(|&k| program.classes[k].name.as_str())
            .collect();
        let mut why = format!(
            "the tiles of {} have no parallel loop ({} run as one GPU thread)",
            and_list(&classes),
            if classes.len() == 1 {
                "they would"
            } else {
                "each would"
            }
        );
        // Name the shared scalars those tiles write: they order every iteration that writes them.
        let shared: Vec<String> = scop
            .arrays
            .iter()
            .filter(|a| a.rank == 0 && a.written && !private.iter().any(|p| p.array == a.id))
            .filter(|a| {
                serial.iter().any(|&k| {
                    sched.nests[k]
                        .statements
                        .iter()
                        .any(|&s| writes(scop, s.index(), a.id))
                })
            })
            .map(|a| format!("`{}`", a.name))
            .collect();
        if !shared.is_empty() {
            let (noun, verb, pronoun) = if shared.len() == 1 {
                ("scalar", "is", "its")
            } else {
                ("scalars", "are", "their")
            };
            let _ = write!(
                why,
                "; the {noun} {}, written there, {verb} not private to each task (a value crosses iterations or tiles), so {pronoun} \
                 dependences keep the iterations that access {} in order",
                and_list(&shared.iter().map(String::as_str).collect::<Vec<_>>()),
                if shared.len() == 1 { "it" } else { "them" }
            );
        }
        return Ok(CudaPlan {
            gpu: Err(why),
            not_thread_private: Vec::new(),
        });
    }
    // A scalar private to each task must also be private to each GPU thread.
    let scopes: Vec<Vec<KernelScope>> = program
        .classes
        .iter()
        .zip(&parallel)
        .map(|(class, flags)| {
            kernel_roots(&class.body, flags)
                .into_iter()
                .map(|r| kernel_scope(r, flags))
                .collect()
        })
        .collect();
    let mut not_thread_private = Vec::new();
    let mut why = None;
    for p in private {
        for (k, class) in program.classes.iter().enumerate() {
            if let Some(reason) =
                polyhedral::thread_private(scop, p.array, sched, NestId::new(k), &scopes[k])?
            {
                let name = &scop.array(p.array).name;
                why.get_or_insert(format!("the scalar `{name}` is private to each task but not to each GPU thread of {}: {reason}", class.name));
                not_thread_private.push(p.array);
                break;
            }
        }
    }
    if let Some(why) = why {
        return Ok(CudaPlan {
            gpu: Err(why),
            not_thread_private,
        });
    }
    let slabs = polyhedral::array_slabs(scop)?;
    Ok(CudaPlan {
        gpu: Ok(GpuScop {
            parallel,
            slabs,
            thread_local: private.to_vec(),
        }),
        not_thread_private,
    })
}

/// `a`, `a and b`, `a, b and c`.
pub(super) fn and_list(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.to_string(),
        None => String::new(),
    }
}

/// Whether statement `stmt` of `scop` writes `array`.
pub(super) fn writes(scop: &Scop, stmt: usize, array: ArrayId) -> bool {
    scop.statements.get(stmt).is_some_and(|s| {
        s.accesses
            .iter()
            .any(|a| a.array == array && a.kind == AccessKind::Write)
    })
}

/// Whether statement `stmt` of `scop` reads or writes `array`.
pub(super) fn accesses(scop: &Scop, stmt: usize, array: ArrayId) -> bool {
    scop.statements
        .get(stmt)
        .is_some_and(|s| s.accesses.iter().any(|a| a.array == array))
}

/// The index of statement `S<k>`.
pub(super) fn statement_index(name: &str) -> Option<usize> {
    name.strip_prefix('S').and_then(|k| k.parse().ok())
}

/// Whether the loop over `iter` with body `body` runs on the host (one iteration after the
/// other, each issuing its launches): a sequential loop around a parallel one. A sequential loop
/// with no parallel loop inside is one launch of one thread, which runs it whole.
pub(super) fn host_loop(iter: &str, body: &Ast, parallel: &[(BodyLoop, bool)]) -> bool {
    fn encloses_parallel(ast: &Ast, parallel: &[(BodyLoop, bool)]) -> bool {
        match ast {
            Ast::Block(items) => items.iter().any(|i| encloses_parallel(i, parallel)),
            Ast::For { iter, body, .. } => {
                is_parallel(iter, body, parallel) || encloses_parallel(body, parallel)
            }
            Ast::If { then, els, .. } => {
                encloses_parallel(then, parallel)
                    || els.as_ref().is_some_and(|e| encloses_parallel(e, parallel))
            }
            // CPU tile code only; GPU bodies have no kernels of that kind.
            Ast::Kernel(k) => encloses_parallel(&k.fallback, parallel),
            Ast::User { .. } => false,
        }
    }
    !is_parallel(iter, body, parallel) && encloses_parallel(body, parallel)
}

/// The roots of the kernels of a tile body, in the order [`host`] launches them: each parallel
/// loop that no parallel loop encloses, each sequential loop with no parallel loop inside that
/// no parallel loop encloses, and each statement outside every loop of those.
pub(super) fn kernel_roots<'a>(ast: &'a Ast, parallel: &[(BodyLoop, bool)]) -> Vec<&'a Ast> {
    fn walk<'a>(ast: &'a Ast, parallel: &[(BodyLoop, bool)], out: &mut Vec<&'a Ast>) {
        match ast {
            Ast::Block(items) => items.iter().for_each(|i| walk(i, parallel, out)),
            Ast::For { iter, body, .. } if host_loop(iter, body, parallel) => {
                walk(body, parallel, out)
            }
            Ast::If { then, els, .. } => {
                walk(then, parallel, out);
                if let Some(e) = els {
                    walk(e, parallel, out);
                }
            }
            Ast::Kernel(k) => walk(&k.fallback, parallel, out),
            Ast::For { .. } | Ast::User { .. } => out.push(ast),
        }
    }
    let mut out = Vec::new();
    walk(ast, parallel, &mut out);
    out
}

/// The loop that takes the second thread dimension inside the thread loop with body `body`:
/// a parallel loop that is the whole body.
pub(super) fn inner_thread_loop<'a>(
    body: &'a Ast,
    parallel: &[(BodyLoop, bool)],
) -> Option<&'a Ast> {
    match body {
        Ast::For { iter, body: b, .. } if is_parallel(iter, b, parallel) => Some(body),
        Ast::Block(items) if items.len() == 1 => match &items[0] {
            f @ Ast::For { iter, body: b, .. } if is_parallel(iter, b, parallel) => Some(f),
            _ => None,
        },
        _ => None,
    }
}

/// The kernel rooted at `root` (one of [`kernel_roots`]) as the private scalars see it.
pub(super) fn kernel_scope(root: &Ast, parallel: &[(BodyLoop, bool)]) -> KernelScope {
    let dim = |iter: &str| {
        iter.strip_prefix(BODY_ITER)
            .and_then(|d| d.parse::<usize>().ok())
    };
    match root {
        Ast::For { iter, body, .. } if !is_parallel(iter, body, parallel) => {
            // One thread runs the loop whole: one launch fixes the dimensions outside it.
            let statements = BodyLoop::of(iter, body, BODY_ITER)
                .map(|l| l.statements)
                .unwrap_or_default();
            KernelScope {
                statements,
                fixed: dim(iter).unwrap_or(usize::MAX),
            }
        }
        Ast::For { iter, body, .. } => {
            let statements = BodyLoop::of(iter, body, BODY_ITER)
                .map(|l| l.statements)
                .unwrap_or_default();
            let innermost = match inner_thread_loop(body, parallel) {
                Some(Ast::For { iter: inner, .. }) => dim(inner),
                _ => dim(iter),
            };
            // An iterator that is not a schedule dimension cannot happen; all dimensions fixed
            // then asks for the strictest condition.
            KernelScope {
                statements,
                fixed: innermost.map_or(usize::MAX, |d| d + 1),
            }
        }
        Ast::User { name, .. } => KernelScope {
            statements: vec![name.clone()],
            fixed: usize::MAX,
        },
        // Not a kernel root: no statement, so a private scalar it accessed would be refused.
        Ast::Block(_) | Ast::If { .. } | Ast::Kernel(_) => KernelScope {
            statements: Vec::new(),
            fixed: usize::MAX,
        },
    }
}

/// Whether the body loop over `iter` with body `body` is parallel.
pub(super) fn is_parallel(iter: &str, body: &Ast, parallel: &[(BodyLoop, bool)]) -> bool {
    BodyLoop::of(iter, body, BODY_ITER).is_some_and(|l| parallel.iter().any(|(q, p)| *p && *q == l))
}
