//! Printing of polyhedral's plain [`Ast`]/[`Expr`] as C.
//!
//! Loop counters are `long`. ISL's division and remainder operators map to C operators where
//! ISL guarantees C's truncating semantics agree (non-negative dividend, or a remainder compared
//! with zero) and to the `tf_floord` helper otherwise; `min`/`max` map to `tf_min`/`tf_max`. The
//! helpers are defined by [`HELPERS`], which every generated file includes once.
//!
//! User nodes are printed by a caller-supplied closure, since what an instance of `S3` or of a
//! tile `N0` becomes depends on the context (a statement body, a task spawn, a key bound).

use polyhedral::{
    Ast, Expr, Kernel, KernelLoop, KernelPart, KernelWidth, OpKind, RowPart, RowWhat, StepPart,
    StepWhat, VectorLanes,
};
use std::fmt::Write;

/// Prints one user node (`name`, `args`) at an indentation depth (see [`stmt`]).
pub type UserPrinter<'a> = dyn FnMut(&mut String, &str, &[Expr], usize) + 'a;

/// C definitions used by printed expressions (each helper function `TF_UNUSED`: a file that does
/// not call one must compile silently under clang's `-Wall` too), and `TF_BODY`, which marks the
/// tile bodies: each
/// body is a function of its own that GCC must not analyse across calls (`noipa`). GCC 12 (at
/// least 12.2, at -O1 and -O2) drops the call of some bodies from their wrapper: after its
/// induction variable optimization (`-fivopts`) rewrote a body's stores through pointers it
/// computes from the difference of two addresses (`2 * p + (c - &A)`), the side-effect summary
/// it keeps of the function for its callers (pure-const, mod-ref) no longer sees the stores, and
/// the call is removed as dead (random program 1020 of the test suite: a tile of a skewed band
/// did not run; `-fno-ipa-pure-const -fno-ipa-modref -fno-ipa-reference`, `noipa` on the body,
/// `-fno-ivopts` and clang all give the right result; the stores themselves are right). The
/// bodies used to be compiled with `optimize("no-ivopts")` instead, which left each vector loop
/// with a pointer per array reference, spilled to the stack in the stencils' loops; with
/// `noipa`, one thread at LARGE, medians of 3 against the no-ivopts build: heat-3d 1.28 s to
/// 1.07, syr2k 0.141 to 0.125, lu 0.507 to 0.470, cholesky 0.420 to 0.394, gemm 0.088 to 0.086,
/// jacobi-2d and fdtd-2d unchanged. A body runs once per tile, so the call it keeps costs
/// nothing measurable. GCC before 8 has no `noipa`: there the bodies keep `no-ivopts`.
///
/// `TF_VBYTES`, the vector types `tf_vd`/`tf_vf` and the macros `TF_VD`/`TF_VF` (an element and
/// the ones after it read as one vector; with 64-byte vectors also the 32-byte types
/// `tf_vd32`/`tf_vf32`, for the half vectors at the end of lanes that end inside a block) serve the register-tiled vector kernels (`polyhedral::Kernel`); they are defined for GCC and clang
/// targets with AVX (32 bytes) or AVX-512 (64), where the kernels are faster than the scalar
/// tile code, and `-DTF_NO_VECTOR_KERNELS` leaves them undefined (the scalar code then runs).
/// `TF_PIN` (an empty `asm` that claims to change a vector register) keeps a packed vector in a
/// register for all the rows of a kernel's block (`polyhedral::pinned_packs`).
/// `TF_SCALAR_LOOP` (an empty `asm` statement) keeps the C compiler from vectorizing the loop it
/// is in: an accumulator kernel's reduction loop, which GCC 12 vectorizes as in-order reductions
/// of its chains, with a shuffle per element (cholesky at LARGE, one thread: 0.63 s vectorized,
/// 0.41 s with it). On AMD Zen targets (`-march=znver1` .. `znver5`, which `-march=native` gives
/// there) it is empty: Zen 3 runs the in-order vector reductions, permutations included, at
/// least as fast (durbin at EXTRALARGE, 2 threads, medians of 31: 18.2 ms scalar against
/// 13.9 vectorized, gcc's original 13.1; trisolv, gesummv, bicg and cholesky within the noise).
pub const HELPERS: &str = "\
#if defined(__GNUC__) || defined(__clang__)
#define TF_UNUSED __attribute__((unused))
#else
#define TF_UNUSED
#endif
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define TF_BODY __attribute__((noipa))
#elif defined(__GNUC__) && !defined(__clang__)
#define TF_BODY __attribute__((noinline, optimize(\"no-ivopts\")))
#else
#define TF_BODY
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX__) && !defined(TF_NO_VECTOR_KERNELS)
#if defined(__AVX512F__)
#define TF_VBYTES 64
#else
#define TF_VBYTES 32
#endif
typedef double tf_vd __attribute__((vector_size(TF_VBYTES), aligned(8), may_alias));
typedef float tf_vf __attribute__((vector_size(TF_VBYTES), aligned(4), may_alias));
#define TF_VD_TYPE tf_vd
#define TF_VF_TYPE tf_vf
#define TF_VD(x) (*(TF_VD_TYPE *)&(x))
#define TF_VF(x) (*(TF_VF_TYPE *)&(x))
#if TF_VBYTES == 64
typedef double tf_vd32 __attribute__((vector_size(32), aligned(8), may_alias));
typedef float tf_vf32 __attribute__((vector_size(32), aligned(4), may_alias));
#endif
#define TF_PIN(x) __asm__(\"\" : \"+v\"(x))
#if TF_VBYTES == 64
#define TF_ROWD_TYPE tf_vd32
#define TF_ROWF_TYPE tf_vf32
#else
#define TF_ROWD_TYPE tf_vd
#define TF_ROWF_TYPE tf_vf
#endif
#define TF_ROWD(x) (*(TF_ROWD_TYPE *)&(x))
#define TF_ROWF(x) (*(TF_ROWF_TYPE *)&(x))
#define TF_PREFETCH_BYTES 512
#define TF_PREFETCH(x) __builtin_prefetch((const void *)((__UINTPTR_TYPE__)&(x) + TF_PREFETCH_BYTES))
#if defined(__clang__)
#define TF_SHUFD(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#define TF_SHUFF(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
typedef long long tf_rowd_mask __attribute__((vector_size(32)));
typedef int tf_rowf_mask __attribute__((vector_size(32)));
#define TF_SHUFD(a, b, ...) __builtin_shuffle(a, b, (tf_rowd_mask){__VA_ARGS__})
#define TF_SHUFF(a, b, ...) __builtin_shuffle(a, b, (tf_rowf_mask){__VA_ARGS__})
#endif
#endif
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__znver1__) && !defined(__znver2__) && !defined(__znver3__) && !defined(__znver4__) && !defined(__znver5__)
#define TF_SCALAR_LOOP __asm__(\"\")
#else
#define TF_SCALAR_LOOP
#endif
static inline TF_UNUSED long tf_floord(long a, long b) { long q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
static inline TF_UNUSED long tf_min(long a, long b) { return a < b ? a : b; }
static inline TF_UNUSED long tf_max(long a, long b) { return a > b ? a : b; }
static inline TF_UNUSED long tf_spread_at(long t, long n, long p) { long h = t % p, lo = (h * n + p - 1) / p, hi = ((h + 1) * n + p - 1) / p; return lo + t / p < hi ? lo + t / p : -1; }
static inline TF_UNUSED void tf_box_add(long *lo, long *hi, int *first, int d, const long *key) { for (int x = 0; x < d; x++) { if (*first || key[x] < lo[x]) lo[x] = key[x]; if (*first || key[x] > hi[x]) hi[x] = key[x]; } *first = 0; }
";

/// The in-register transposes of the loops whose rows run as vector lanes (`polyhedral::rows`),
/// which every generated file includes after [`HELPERS`]: `tf_transpose_rowd` for four rows of
/// four doubles and `tf_transpose_rowf` for eight rows of eight floats (`TF_ROWD_TYPE`,
/// `TF_ROWF_TYPE`: 32-byte vectors at every vector size), each a butterfly of
/// `log2(lanes)` stages: at stage `b` (1, 2, 4, ...) rows `k` and `k + b` (bit `b` of `k`
/// clear) exchange their blocks of `b` lanes, so that after the last one `r[k][x]` is what
/// `r[x][k]` was.
pub fn row_transposes() -> String {
    let mut out = String::from("#if defined(TF_VBYTES)\n");
    for (name, ty, shuf, lanes) in [
        ("tf_transpose_rowd", "TF_ROWD_TYPE", "TF_SHUFD", 4usize),
        ("tf_transpose_rowf", "TF_ROWF_TYPE", "TF_SHUFF", 8),
    ] {
        let _ = writeln!(out, "static inline TF_UNUSED void {name}({ty} *r) {{");
        let mut b = 1;
        while b < lanes {
            for k in (0..lanes).filter(|k| k & b == 0) {
                let mask = |high: bool| -> String {
                    (0..lanes)
                        .map(|p| match (p & b == 0, high) {
                            (true, false) => p,
                            (false, false) => lanes + p - b,
                            (true, true) => p + b,
                            (false, true) => lanes + p,
                        })
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let _ = writeln!(
                    out,
                    "  {{ {ty} lo = {shuf}(r[{k}], r[{m}], {}), hi = {shuf}(r[{k}], r[{m}], {}); r[{k}] = lo; r[{m}] = hi; }}",
                    mask(false),
                    mask(true),
                    m = k + b
                );
            }
            b *= 2;
        }
        out.push_str("}\n");
    }
    out.push_str("#endif\n");
    out
}

/// Prints an expression, fully parenthesized (so it can be substituted anywhere).
pub fn expr(e: &Expr) -> String {
    let mut s = String::new();
    write_expr(&mut s, e);
    s
}

fn write_expr(out: &mut String, e: &Expr) {
    match e {
        Expr::Int(v) => {
            if v.starts_with('-') {
                let _ = write!(out, "({v})");
            } else {
                out.push_str(v);
            }
        }
        Expr::Id(name) => out.push_str(name),
        Expr::Op(op, args) => write_op(out, *op, args),
    }
}

fn write_op(out: &mut String, op: OpKind, args: &[Expr]) {
    let infix = |out: &mut String, sym: &str| {
        out.push('(');
        for (k, a) in args.iter().enumerate() {
            if k > 0 {
                let _ = write!(out, " {sym} ");
            }
            write_expr(out, a);
        }
        out.push(')');
    };
    let call = |out: &mut String, f: &str| {
        // n-ary min/max/floord nest to the left: f(f(a, b), c).
        let mut acc = String::new();
        write_expr(&mut acc, &args[0]);
        for a in &args[1..] {
            let mut rhs = String::new();
            write_expr(&mut rhs, a);
            acc = format!("{f}({acc}, {rhs})");
        }
        out.push_str(&acc);
    };
    match op {
        OpKind::And | OpKind::AndThen => infix(out, "&&"),
        OpKind::Or | OpKind::OrElse => infix(out, "||"),
        OpKind::Max => call(out, "tf_max"),
        OpKind::Min => call(out, "tf_min"),
        OpKind::Minus => {
            out.push_str("(-");
            write_expr(out, &args[0]);
            out.push(')');
        }
        OpKind::Add => infix(out, "+"),
        OpKind::Sub => infix(out, "-"),
        OpKind::Mul => infix(out, "*"),
        OpKind::Div | OpKind::PdivQ => infix(out, "/"),
        OpKind::PdivR | OpKind::ZdivR => infix(out, "%"),
        OpKind::FdivQ => call(out, "tf_floord"),
        OpKind::Cond | OpKind::Select => {
            out.push('(');
            write_expr(out, &args[0]);
            out.push_str(" ? ");
            write_expr(out, &args[1]);
            out.push_str(" : ");
            write_expr(out, &args[2]);
            out.push(')');
        }
        OpKind::Eq => infix(out, "=="),
        OpKind::Le => infix(out, "<="),
        OpKind::Lt => infix(out, "<"),
        OpKind::Ge => infix(out, ">="),
        OpKind::Gt => infix(out, ">"),
    }
}

/// A loop of a statement tree, as [`stmt_at_loops`] hands it to its printer.
pub struct Loop<'a> {
    pub iter: &'a str,
    pub init: &'a Expr,
    pub cond: &'a Expr,
    pub inc: &'a Expr,
    pub body: &'a Ast,
}

/// Prints a loop over the iterator [`stmt_at_loops`] was given, at indentation `depth`, with
/// `user` for the instances in its body; returns `false` (having printed nothing) to have it
/// printed as any other loop.
pub type LoopPrinter<'a> =
    dyn FnMut(&mut String, &Loop<'_>, usize, &mut UserPrinter<'_>) -> bool + 'a;

/// Prints `ast` like [`stmt`], except the loops over `iter`, which `at` prints (the OpenMP
/// target's `parallel for`, the tasks target's blocks of spread streams): the loops and
/// conditions around them are printed here, any part without a loop over `iter` by [`stmt`].
pub fn stmt_at_loops(
    out: &mut String,
    ast: &Ast,
    depth: usize,
    iter: &str,
    at: &mut LoopPrinter<'_>,
    user: &mut UserPrinter<'_>,
) {
    if !mentions_loop(ast, iter) {
        stmt(out, ast, depth, user);
        return;
    }
    let pad = "  ".repeat(depth);
    match ast {
        Ast::Block(items) => {
            for item in items {
                stmt_at_loops(out, item, depth, iter, at, user);
            }
        }
        Ast::For {
            iter: it,
            init,
            cond,
            inc,
            body,
        } => {
            let l = Loop {
                iter: it,
                init,
                cond,
                inc,
                body,
            };
            if it == iter && at(out, &l, depth, user) {
                return;
            }
            if it != iter && (row_lanes_of(body).is_some() || step_lanes_of(body).is_some()) {
                return stmt(out, ast, depth, user);
            }
            let _ = writeln!(
                out,
                "{pad}for (long {it} = {}; {}; {it} += {}) {{",
                expr(init),
                expr(cond),
                expr(inc)
            );
            if it == iter {
                stmt(out, body, depth + 1, user);
            } else {
                stmt_at_loops(out, body, depth + 1, iter, at, user);
            }
            let _ = writeln!(out, "{pad}}}");
        }
        Ast::If { cond, then, els } => {
            let _ = writeln!(out, "{pad}if ({}) {{", expr(cond));
            stmt_at_loops(out, then, depth + 1, iter, at, user);
            if let Some(e) = els {
                let _ = writeln!(out, "{pad}}} else {{");
                stmt_at_loops(out, e, depth + 1, iter, at, user);
            }
            let _ = writeln!(out, "{pad}}}");
        }
        Ast::User { .. } | Ast::Kernel(_) => stmt(out, ast, depth, user),
    }
}

/// Whether `ast` has a loop over `iter`.
fn mentions_loop(ast: &Ast, iter: &str) -> bool {
    match ast {
        Ast::Block(items) => items.iter().any(|i| mentions_loop(i, iter)),
        Ast::For { iter: it, body, .. } => it == iter || mentions_loop(body, iter),
        Ast::If { then, els, .. } => {
            mentions_loop(then, iter) || els.as_deref().is_some_and(|e| mentions_loop(e, iter))
        }
        Ast::Kernel(k) => {
            k.loops.iter().any(|l| l.iter == iter)
                || mentions_loop(&k.fallback, iter)
                || mentions_loop(&k.tail, iter)
        }
        Ast::User { .. } => false,
    }
}

/// Prints a statement tree at indentation `depth` (two spaces a level). `user` prints one
/// instance (`name`, `args`) at the given indentation, each line ending in a newline.
pub fn stmt(out: &mut String, ast: &Ast, depth: usize, user: &mut UserPrinter<'_>) {
    let pad = "  ".repeat(depth);
    match ast {
        Ast::Block(items) => {
            for item in items {
                stmt(out, item, depth, user);
            }
        }
        Ast::For {
            iter,
            init,
            cond,
            inc,
            body,
        } => match (row_lanes_of(body), step_lanes_of(body)) {
            (Some(lanes), _) => {
                let head = [iter.as_str(), &expr(init), &expr(cond), &expr(inc)];
                let plain = |out: &mut String, user: &mut UserPrinter<'_>| {
                    plain_for(out, head, body, depth, user)
                };
                row_lanes_loop(out, ast, lanes, depth, user, Some(&plain), None)
            }
            (None, Some((lanes, carries))) => {
                step_lanes_loop(out, ast, lanes, &carries, depth, user)
            }
            (None, None) => plain_for(
                out,
                [iter, &expr(init), &expr(cond), &expr(inc)],
                body,
                depth,
                user,
            ),
        },
        Ast::If { cond, then, els } => {
            let _ = writeln!(out, "{pad}if {} {{", paren(&expr(cond)));
            stmt(out, then, depth + 1, user);
            match els {
                Some(e) => {
                    let _ = writeln!(out, "{pad}}} else {{");
                    stmt(out, e, depth + 1, user);
                    let _ = writeln!(out, "{pad}}}");
                }
                None => {
                    let _ = writeln!(out, "{pad}}}");
                }
            }
        }
        Ast::User { name, args } => user(out, name, args, depth),
        Ast::Kernel(k) => kernel(out, k, depth, user),
    }
}

/// Prints a register-tiled kernel (`polyhedral::Kernel`): with vectors, its loops and copies
/// of its statement under `#if` on the vector size `TF_VBYTES` ([`HELPERS`]) and its fallback
/// otherwise (lanes that end inside a block, `KernelWidth::tail`, run as whole blocks, then
/// single vectors, then with 64-byte vectors a 32-byte one, then the statement on single
/// elements); without, the accumulators loaded,
/// updated over the reduction loop, and stored.
fn kernel(out: &mut String, k: &Kernel, depth: usize, user: &mut UserPrinter<'_>) {
    let one = Expr::Int("1".into());
    match &k.vector {
        Some(v) => {
            // One copy of the kernel for each register block, under `#if` on the widths that
            // run it (`polyhedral::kernel::shapes_for`), the fallback for the others. The
            // widest first.
            let mut groups: Vec<(KernelWidth, Vec<String>)> = Vec::new();
            for w in v.widths.iter().rev() {
                let cond = format!("TF_VBYTES == {}", w.bytes);
                let same =
                    |g: &KernelWidth| (g.rows, g.vectors, g.tail) == (w.rows, w.vectors, w.tail);
                match groups.iter_mut().find(|(g, _)| same(g)) {
                    Some((_, conds)) => conds.push(cond),
                    None => groups.push((*w, vec![cond])),
                }
            }
            for (g, (shape, conds)) in groups.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "#{} defined(TF_VBYTES) && ({})",
                    if g == 0 { "if" } else { "elif" },
                    conds.join(" || ")
                );
                vector_kernel(out, k, v, shape, depth, user);
            }
            out.push_str("#else\n");
            stmt(out, &k.fallback, depth, user);
            out.push_str("#endif\n");
        }
        None => {
            // The loops between the rows and the reduction (`polyhedral::kernel`'s
            // "Accumulators with a tail") run inside each block of rows.
            let (red, mids) = k.loops[1..].split_last().expect("rows and a reduction");
            let block = |out: &mut String, user: &mut UserPrinter<'_>, rows: i64, depth: usize| {
                for (n, l) in mids.iter().enumerate() {
                    open_loop(out, l, &one, depth + n);
                }
                let d = depth + mids.len();
                for r in 0..rows as usize {
                    let name = polyhedral::kernel_user(&k.stmt, KernelPart::Load(r));
                    user(out, &name, &at_row(k, r as i64), d);
                }
                open_loop(out, red, &one, d);
                let _ = writeln!(out, "{}TF_SCALAR_LOOP;", "  ".repeat(d + 1));
                for r in 0..rows as usize {
                    let name = polyhedral::kernel_user(&k.stmt, KernelPart::Accumulate(r));
                    user(out, &name, &at_row(k, r as i64), d + 1);
                }
                let _ = writeln!(out, "{}}}", "  ".repeat(d));
                for r in 0..rows as usize {
                    let name = polyhedral::kernel_user(&k.stmt, KernelPart::Store(r));
                    user(out, &name, &at_row(k, r as i64), d);
                }
                stmt(out, &k.tail, d, user);
                for n in (0..mids.len()).rev() {
                    let _ = writeln!(out, "{}}}", "  ".repeat(depth + n));
                }
            };
            let accumulators =
                |out: &mut String, user: &mut UserPrinter<'_>| block(out, user, k.rows, depth + 1);
            if k.ragged {
                // Blocks of rows while a whole one fits, then the rows left one at a time
                // (`polyhedral::kernel`'s "Rows that end anywhere").
                let pad = "  ".repeat(depth);
                let row = &k.loops[0];
                let iter = &row.iter;
                let _ = writeln!(out, "{pad}{{");
                let _ = writeln!(out, "{pad}  long {iter} = {};", expr(&row.init));
                let last = Expr::Int((k.rows - 1).to_string());
                let whole = offset(&row.cond, iter, last);
                for (n, cond) in [(k.rows, whole), (1, row.cond.clone())] {
                    let _ = writeln!(out, "{pad}  for (; {}; {iter} += {n}) {{", expr(&cond));
                    block(out, user, n, depth + 2);
                    let _ = writeln!(out, "{pad}  }}");
                }
                let _ = writeln!(out, "{pad}}}");
                return;
            }
            let rows = |out: &mut String| {
                open_loop(out, &k.loops[0], &Expr::Int(k.rows.to_string()), depth)
            };
            let close = |out: &mut String| {
                let _ = writeln!(out, "{}}}", "  ".repeat(depth));
            };
            let Some(lanes) = k.row_lanes else {
                rows(out);
                accumulators(out, user);
                return close(out);
            };
            // The block of rows as the jammed reduction loop, its rows as lanes
            // (`polyhedral::rows`' "Accumulators as lanes"), the accumulators otherwise.
            let red = &k.loops[1];
            let copies = (0..k.rows)
                .map(|r| Ast::User {
                    name: k.stmt.clone(),
                    args: at_row(k, r),
                })
                .collect();
            let jammed = Ast::For {
                iter: red.iter.clone(),
                init: red.init.clone(),
                cond: red.cond.clone(),
                inc: one.clone(),
                body: Box::new(Ast::Block(copies)),
            };
            match &k.fused {
                None => {
                    rows(out);
                    row_lanes_loop(
                        out,
                        &jammed,
                        lanes,
                        depth + 1,
                        user,
                        Some(&accumulators),
                        None,
                    );
                    close(out);
                }
                // With an update in the same loop: its own code after the accumulators where
                // the C compiler has no vectors.
                Some(update) => {
                    let fused = Fused {
                        update,
                        row: &k.loops[0].iter,
                        rows: k.rows,
                    };
                    out.push_str("#if defined(TF_VBYTES)\n");
                    rows(out);
                    row_lanes_loop(out, &jammed, lanes, depth + 1, user, None, Some(&fused));
                    close(out);
                    out.push_str("#else\n");
                    rows(out);
                    accumulators(out, user);
                    close(out);
                    stmt(out, &update.plain, depth, user);
                    out.push_str("#endif\n");
                }
            }
        }
    }
}

/// The code of vector kernel `k` (its lanes `v`) for the widths that run the register block
/// `shape`: the packed operands' buffers and their fill, then the loops over blocks of rows and
/// of lanes (lanes that end inside a block, `KernelWidth::tail`, run as whole blocks, then
/// single vectors, then with 64-byte vectors a 32-byte one, then the statement on single
/// elements) around the reduction.
fn vector_kernel(
    out: &mut String,
    k: &Kernel,
    v: &VectorLanes,
    shape: &KernelWidth,
    depth: usize,
    user: &mut UserPrinter<'_>,
) {
    let rows = shape.rows;
    let one = Expr::Int("1".into());
    // Packed occurrences: their buffers, filled over the reduction and lane loops.
    let mut depth = depth;
    if let Some(p) = &v.packs {
        let pad = "  ".repeat(depth);
        let elem = if v.elem_bytes == 4 { "float" } else { "double" };
        let _ = writeln!(out, "{pad}{{");
        let mut buffer = |name: &str, cols: i64| {
            let _ = writeln!(
                out,
                "{pad}  static __thread {elem} {name}[{}][{cols}] __attribute__((aligned(64)));",
                p.depth
            );
        };
        for n in 0..p.count {
            buffer(
                &polyhedral::PACK_BUFFER.replace("{n}", &n.to_string()),
                p.lanes,
            );
        }
        if v.scaled {
            buffer(polyhedral::SCALED_BUFFER, rows);
        }
        let (red_loop, lane_loop) = (&k.loops[2], &k.loops[1]);
        let _ = writeln!(
            out,
            "{pad}  const long {} = {}, {} = {};",
            polyhedral::PACK_RED_START,
            expr(&red_loop.init),
            polyhedral::PACK_LANE_START,
            expr(&lane_loop.init)
        );
        let (across, along): (Vec<usize>, Vec<usize>) =
            (0..p.count).partition(|&n| p.across_rows.get(n) == Some(&true));
        let mut fill = |out: &mut String, packs: &[usize], d: usize| {
            for &n in packs {
                let part = KernelPart::PackFill(n, v.lane, p.red, p.frozen);
                let name = polyhedral::kernel_user(&k.stmt, part);
                user(out, &name, &k.args, d);
            }
        };
        if !along.is_empty() {
            open_loop(out, red_loop, &one, depth + 1);
            open_loop(out, lane_loop, &one, depth + 2);
            fill(out, &along, depth + 3);
            let _ = writeln!(out, "{pad}    }}");
            let _ = writeln!(out, "{pad}  }}");
        }
        if !across.is_empty() {
            // A cache line of lanes at a time (`polyhedral::kernel`'s "Columns packed a line
            // at a time"): each row read is a line, each buffer row written a line.
            let line = 64 / v.elem_bytes;
            let iter = &lane_loop.iter;
            let first = format!("{iter}_line");
            let lines = KernelLoop {
                iter: first.clone(),
                init: lane_loop.init.clone(),
                cond: renamed(&lane_loop.cond, iter, &first),
            };
            let mut cond = Expr::Op(
                OpKind::Lt,
                vec![
                    Expr::Id(iter.clone()),
                    Expr::Op(
                        OpKind::Add,
                        vec![Expr::Id(first.clone()), Expr::Int(line.to_string())],
                    ),
                ],
            );
            if p.lanes % line != 0 {
                cond = Expr::Op(OpKind::AndThen, vec![cond, lane_loop.cond.clone()]);
            }
            let in_line = KernelLoop {
                iter: iter.clone(),
                init: Expr::Id(first.clone()),
                cond,
            };
            open_loop(out, &lines, &Expr::Int(line.to_string()), depth + 1);
            open_loop(out, red_loop, &one, depth + 2);
            open_loop(out, &in_line, &one, depth + 3);
            fill(out, &across, depth + 4);
            let _ = writeln!(out, "{pad}      }}");
            let _ = writeln!(out, "{pad}    }}");
            let _ = writeln!(out, "{pad}  }}");
        }
        depth += 1;
    }
    let row_loop = &k.loops[0];
    if shape.rest == 0 {
        open_loop(out, row_loop, &Expr::Int(rows.to_string()), depth);
        block_of_rows(out, k, v, shape, rows, depth + 1, user);
        let _ = writeln!(out, "{}}}", "  ".repeat(depth));
    } else {
        // Blocks of `rows` while a whole one fits, then one of the rest
        // (`KernelWidth::rest`).
        let pad = "  ".repeat(depth);
        let iter = &row_loop.iter;
        let _ = writeln!(out, "{pad}{{");
        let _ = writeln!(out, "{pad}  long {iter} = {};", expr(&row_loop.init));
        let last = Expr::Int((rows - 1).to_string());
        let whole = offset(&row_loop.cond, iter, last);
        for (n, cond) in [(rows, whole), (shape.rest, row_loop.cond.clone())] {
            let _ = writeln!(out, "{pad}  for (; {}; {iter} += {n}) {{", expr(&cond));
            block_of_rows(out, k, v, shape, n, depth + 2, user);
            let _ = writeln!(out, "{pad}  }}");
        }
        let _ = writeln!(out, "{pad}}}");
    }
    if v.packs.is_some() {
        depth -= 1;
        let _ = writeln!(out, "{}}}", "  ".repeat(depth));
    }
}

/// The body of vector kernel `k`'s row loop for one block of `rows` rows (of the register
/// block `shape`, or fewer: its last, `KernelWidth::rest`), at `depth`: the block's scaled
/// products, then the loops over blocks of lanes (lanes that end inside a block,
/// `KernelWidth::tail`, run as whole blocks, then single vectors, then with 64-byte vectors a
/// 32-byte one, then the statement on single elements) around the reduction.
fn block_of_rows(
    out: &mut String,
    k: &Kernel,
    v: &VectorLanes,
    shape: &KernelWidth,
    rows: i64,
    depth: usize,
    user: &mut UserPrinter<'_>,
) {
    let block_vectors = shape.vectors;
    let one = Expr::Int("1".into());
    let lanes_step = Expr::Op(
        OpKind::Mul,
        vec![Expr::Int(block_vectors.to_string()), vector_elements(v)],
    );
    // The scaled products of this block of rows, over the reduction loop (whose bounds
    // do not move with the rows or the lanes: `Packs`).
    if let (true, Some(p)) = (v.scaled, &v.packs) {
        open_loop(out, &k.loops[2], &one, depth);
        for r in 0..rows {
            let part = KernelPart::ScaleFill(v.lane, p.red, r as usize, p.frozen);
            let name = polyhedral::kernel_user(&k.stmt, part);
            user(out, &name, &at_row(k, r), depth + 1);
        }
        let _ = writeln!(out, "{}}}", "  ".repeat(depth));
    }
    let name = |r: i64, pinned: Option<usize>| match &v.packs {
        Some(p) if v.scaled => polyhedral::kernel_user(
            &k.stmt,
            KernelPart::ScaledLanes(v.lane, p.red, r as usize, p.frozen, pinned),
        ),
        Some(p) => polyhedral::kernel_user(
            &k.stmt,
            KernelPart::PackedLanes(v.lane, p.red, p.frozen, pinned),
        ),
        None => polyhedral::kernel_user(&k.stmt, KernelPart::Lanes(v.lane)),
    };
    let lane_loop = &k.loops[1];
    let lane = &lane_loop.iter;
    // The statement's arguments at row `r` and vector `c` of a block.
    let at = |r: i64, c: i64| -> Vec<Expr> {
        at_row(k, r)
            .iter()
            .map(|a| {
                let by = Expr::Op(
                    OpKind::Mul,
                    vec![Expr::Int(c.to_string()), vector_elements(v)],
                );
                offset(a, lane, by)
            })
            .collect()
    };
    // The reduction loop around `vectors` vectors of each row (the statement as it is,
    // on one element, for none), at `depth`. A whole block of a kernel with packed
    // operands loads each packed vector of the step once, for all its rows, into a
    // register (`polyhedral::pinned_packs`, for the block's rows).
    let block = KernelWidth { rows, ..*shape };
    let mut run = |out: &mut String, vectors: i64, depth: usize| {
        open_loop(out, &k.loops[2], &one, depth);
        let pinned = match &v.packs {
            Some(p) if vectors == block_vectors && polyhedral::pinned_packs(p.count, &block) => {
                for c in 0..vectors {
                    for n in 0..p.count {
                        let part = KernelPart::PackVector(n, v.lane, p.red, c as usize);
                        let name = polyhedral::kernel_user(&k.stmt, part);
                        user(out, &name, &at(0, c), depth + 1);
                    }
                }
                true
            }
            _ => false,
        };
        for r in 0..rows {
            if vectors == 0 {
                user(out, &k.stmt, &at_row(k, r), depth + 1);
                continue;
            }
            for c in 0..vectors {
                let name = name(r, pinned.then_some(c as usize));
                user(out, &name, &at(r, c), depth + 1);
            }
        }
        let _ = writeln!(out, "{}}}", "  ".repeat(depth));
    };
    if shape.tail {
        // Whole blocks while the block's last lane is in the loop's range, then single
        // vectors, then (64-byte vectors) one 32-byte vector, then single elements
        // (`KernelWidth::tail`). The half vector is the statement's vector copy with
        // `TF_VD`/`TF_VF` meaning the 32-byte types for the length of its loop.
        let pad = "  ".repeat(depth);
        let _ = writeln!(out, "{pad}long {lane} = {};", expr(&lane_loop.init));
        let single = vector_elements(v);
        let half = Expr::Int((polyhedral::HALF_BYTES / v.elem_bytes).to_string());
        let lanes = [
            (block_vectors, lanes_step.clone(), false),
            (1, single, false),
            (1, half, true),
            (0, one.clone(), false),
        ];
        for (vectors, step, halved) in lanes {
            let cond = if vectors == 0 {
                lane_loop.cond.clone()
            } else {
                let last = Expr::Op(OpKind::Sub, vec![step.clone(), one.clone()]);
                offset(&lane_loop.cond, lane, last)
            };
            if halved {
                out.push_str(HALF_VECTORS);
            }
            let _ = writeln!(
                out,
                "{pad}for (; {}; {lane} += {}) {{",
                expr(&cond),
                expr(&step)
            );
            run(out, vectors, depth + 1);
            let _ = writeln!(out, "{pad}}}");
            if halved {
                out.push_str(WHOLE_VECTORS);
            }
        }
    } else {
        open_loop(out, lane_loop, &lanes_step, depth);
        run(out, block_vectors, depth + 1);
        let _ = writeln!(out, "{}}}", "  ".repeat(depth));
    }
}

/// `for (long iter = init; cond; iter += inc) body` at indentation `depth`, from the loop's
/// `[iter, init, cond, inc]` as printed.
fn plain_for(
    out: &mut String,
    head: [&str; 4],
    body: &Ast,
    depth: usize,
    user: &mut UserPrinter<'_>,
) {
    let [iter, init, cond, inc] = head;
    let pad = "  ".repeat(depth);
    let _ = writeln!(
        out,
        "{pad}for (long {iter} = {init}; {cond}; {iter} += {inc}) {{"
    );
    stmt(out, body, depth + 1, user);
    let _ = writeln!(out, "{pad}}}");
}

/// The lanes of a loop body that `polyhedral::rows` marked to run its rows as vector lanes
/// (the marker's argument), or `None`.
fn row_lanes_of(body: &Ast) -> Option<i64> {
    match marker_numbers(body, polyhedral::ROW_LANES_USER)?.as_slice() {
        &[n] if n > 0 => Some(n),
        _ => None,
    }
}

/// The integer arguments of the marker `name` that `polyhedral::rows` puts first in a loop's
/// body, or `None` when the body does not start with it.
fn marker_numbers(body: &Ast, name: &str) -> Option<Vec<i64>> {
    let first = match body {
        Ast::Block(items) => items.first()?,
        other => other,
    };
    match first {
        Ast::User { name: n, args } if n == name => args
            .iter()
            .map(|a| match a {
                Expr::Int(n) => n.parse().ok(),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Prints loop `ast`, whose body `polyhedral::rows` marked (or an accumulator kernel's rows
/// written out as such a loop), with its jammed rows as the lanes of `lanes`-element vectors
/// under `#if defined(TF_VBYTES)`, and as `otherwise` prints it otherwise: the
/// accumulators loaded, blocks of `lanes` steps (each row's operands loaded as vectors along the
/// loop, transposed, then the statements on vectors step by step), the last steps one lane at
/// a time, the accumulators stored; all of it only when the loop runs a step at least. With
/// `fused`, an update's copies at the kernel's rows run at each block of steps (one vector of
/// the steps' columns each, before the transposes) and after the rows' copies at each last
/// step. Without `otherwise`, the caller prints the `#if` around it.
fn row_lanes_loop(
    out: &mut String,
    ast: &Ast,
    lanes: i64,
    depth: usize,
    user: &mut UserPrinter<'_>,
    otherwise: Option<&Otherwise<'_>>,
    fused: Option<&Fused<'_>>,
) {
    let Ast::For {
        iter,
        init,
        cond,
        body,
        ..
    } = ast
    else {
        return stmt(out, ast, depth, user);
    };
    // Without `otherwise` the caller prints the `#if` around the vector code, which must then
    // be printed.
    let plain = |out: &mut String, user: &mut UserPrinter<'_>| match otherwise {
        Some(otherwise) => otherwise(out, user),
        None => out.push_str("#error tiledflow internal error: rows not as lanes\n"),
    };
    let Some(groups) = polyhedral::row_groups(body, iter) else {
        return plain(out, user);
    };
    let l = lanes as usize;
    if groups.iter().any(|g| g.copies.len() % l != 0) {
        return plain(out, user);
    }
    let vectors = group_vectors(&groups, l);
    let part = |g: usize, v: usize, what: RowWhat| {
        let group = &groups[g];
        polyhedral::kernel_user(
            &group.stmt,
            KernelPart::Row(RowPart {
                what,
                vector: v,
                red: group.red,
                rows: group.rows,
            }),
        )
    };
    let pad = "  ".repeat(depth);
    if otherwise.is_some() {
        out.push_str("#if defined(TF_VBYTES)\n");
    }
    open_first_step(out, &pad, iter, init, cond);
    let inner = depth + 2;
    for &(g, first, v) in &vectors {
        user(
            out,
            &part(g, v, RowWhat::Decl),
            &groups[g].copies[first],
            inner,
        );
    }
    for &(g, first, v) in &vectors {
        for lane in 0..l {
            let args = &groups[g].copies[first + lane];
            user(out, &part(g, v, RowWhat::Acc(lane)), args, inner);
        }
    }
    let last = offset(cond, iter, Expr::Int((lanes - 1).to_string()));
    let _ = writeln!(
        out,
        "{pad}    for (; {}; {iter} += {lanes}) {{",
        expr(&last)
    );
    for &(g, first, v) in &vectors {
        for lane in 0..l {
            let args = &groups[g].copies[first + lane];
            user(out, &part(g, v, RowWhat::Load(lane)), args, inner + 1);
        }
    }
    // The update's copies at the block's rows, in order, each on the step's columns (read
    // before the rows' vectors are transposed).
    if let Some(f) = fused {
        let name = polyhedral::kernel_user(&f.update.stmt, KernelPart::RowLanes(f.update.lane));
        for r in 0..f.rows {
            user(out, &name, &f.at_row(r), inner + 1);
        }
    }
    for &(g, first, v) in &vectors {
        let args = &groups[g].copies[first];
        user(out, &part(g, v, RowWhat::Transpose), args, inner + 1);
    }
    for k in 0..l {
        for &(g, first, v) in &vectors {
            let args: Vec<Expr> = groups[g].copies[first]
                .iter()
                .map(|a| offset(a, iter, Expr::Int(k.to_string())))
                .collect();
            user(out, &part(g, v, RowWhat::Step(k)), &args, inner + 1);
        }
    }
    let _ = writeln!(out, "{pad}    }}");
    let _ = writeln!(out, "{pad}    for (; {}; {iter} += 1) {{", expr(cond));
    // The last steps in the body's order, each copy on its lane.
    let mut seen = vec![0usize; groups.len()];
    let mut copies = Vec::new();
    body.walk(&mut |node| {
        if let Ast::User { name, args } = node {
            copies.push((name.clone(), args.clone()));
        }
    });
    for (name, args) in &copies {
        let Some(g) = groups.iter().position(|group| group.stmt == *name) else {
            continue;
        };
        let c = seen[g];
        seen[g] += 1;
        let first = c - c % l;
        if let Some(&(_, _, v)) = vectors.iter().find(|&&(h, f, _)| h == g && f == first) {
            user(out, &part(g, v, RowWhat::Scalar(c % l)), args, inner + 1);
        }
    }
    if let Some(f) = fused {
        for r in 0..f.rows {
            user(out, &f.update.stmt, &f.at_row(r), inner + 1);
        }
    }
    let _ = writeln!(out, "{pad}    }}");
    for &(g, first, v) in &vectors {
        for lane in 0..l {
            let args = &groups[g].copies[first + lane];
            user(out, &part(g, v, RowWhat::Store(lane)), args, inner);
        }
    }
    let _ = writeln!(out, "{pad}  }}");
    let _ = writeln!(out, "{pad}}}");
    if otherwise.is_some() {
        out.push_str("#else\n");
        plain(out, user);
        out.push_str("#endif\n");
    }
}

/// How a loop whose rows run as lanes is printed where the C compiler has no vectors.
type Otherwise<'a> = dyn Fn(&mut String, &mut UserPrinter<'_>) + 'a;

/// The update that an accumulator kernel's lanes loop runs ([`polyhedral::FusedUpdate`]), at
/// the kernel's rows.
struct Fused<'a> {
    update: &'a polyhedral::FusedUpdate,
    row: &'a str,
    rows: i64,
}

impl Fused<'_> {
    /// The update's arguments at row `r` of the block.
    fn at_row(&self, r: i64) -> Vec<Expr> {
        args_at_row(&self.update.args, self.row, r)
    }
}

/// The vectors of rows of a loop whose statements' copies run as `l` lanes: (group, first
/// copy, vector number), in the groups' order.
fn group_vectors(groups: &[polyhedral::RowGroup], l: usize) -> Vec<(usize, usize, usize)> {
    let mut vectors = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        for first in (0..group.copies.len()).step_by(l) {
            vectors.push((g, first, vectors.len()));
        }
    }
    vectors
}

/// Whether `guards`, all of which must hold, compare one name with constants in ways that no
/// value satisfies (`i == 16` and `i == 0`, where every strip of a small tile is cut): the lanes
/// would never run, and clang warns about such a condition.
fn guards_contradict(guards: &[Expr]) -> bool {
    let mut bounds: Vec<(&str, i128, i128)> = Vec::new();
    for g in guards {
        let Expr::Op(op, args) = g else { continue };
        let (name, c, op) = match args.as_slice() {
            [Expr::Id(x), Expr::Int(c)] => (x.as_str(), c, *op),
            [Expr::Int(c), Expr::Id(x)] => (
                x.as_str(),
                c,
                match op {
                    OpKind::Le => OpKind::Ge,
                    OpKind::Lt => OpKind::Gt,
                    OpKind::Ge => OpKind::Le,
                    OpKind::Gt => OpKind::Lt,
                    other => *other,
                },
            ),
            _ => continue,
        };
        let Ok(c) = c.parse::<i128>() else { continue };
        let (lo, hi) = match op {
            OpKind::Eq => (c, c),
            OpKind::Le => (i128::MIN, c),
            OpKind::Lt => (i128::MIN, c - 1),
            OpKind::Ge => (c, i128::MAX),
            OpKind::Gt => (c + 1, i128::MAX),
            _ => continue,
        };
        match bounds.iter_mut().find(|b| b.0 == name) {
            Some(b) => {
                b.1 = b.1.max(lo);
                b.2 = b.2.min(hi);
            }
            None => bounds.push((name, lo, hi)),
        }
    }
    bounds.iter().any(|&(_, lo, hi)| lo > hi)
}

/// `{ long <iter> = <init>; if (<cond>) {` at indentation `pad`: a loop's lanes version runs
/// only where the loop runs a step at least (its values before the loop are read at the first
/// step).
fn open_first_step(out: &mut String, pad: &str, iter: &str, init: &Expr, cond: &Expr) {
    let _ = writeln!(out, "{pad}{{");
    let _ = writeln!(out, "{pad}  long {iter} = {};", expr(init));
    let _ = writeln!(out, "{pad}  if ({}) {{", expr(cond));
}

/// The lanes and the operands held in registers (group, operand, writing group, kind: 0 for
/// the value of the step before, 1 for the value of this step) of a loop body that
/// `polyhedral::rows` marked to run its statements' rows as vector lanes step by step, or
/// `None`.
fn step_lanes_of(body: &Ast) -> Option<(i64, Vec<[usize; 4]>)> {
    let numbers = marker_numbers(body, polyhedral::ROW_STEPS_USER)?;
    let (&lanes, rest) = numbers.split_first()?;
    if lanes <= 0 || rest.len() % 4 != 0 || rest.iter().any(|&n| n < 0) {
        return None;
    }
    let carries = rest
        .chunks(4)
        .map(|c| [c[0] as usize, c[1] as usize, c[2] as usize, c[3] as usize])
        .collect();
    Some((lanes, carries))
}

/// Prints loop `ast`, whose body `polyhedral::rows` marked, with its statements' jammed rows as
/// the lanes of `lanes`-element vectors step by step under `#if defined(TF_VBYTES)` and where
/// the conditions of the copies' `if`s all hold, and as it is otherwise: the vectors declared
/// and the `carries` of kind 0 (operands held in registers from one step to the next) loaded,
/// then each step runs every vector of every statement in the statements' order (operands
/// gathered or, kind 1, taken from the vector a statement before wrote, the statement on
/// vectors, the written elements stored) and hands the written vectors to the operands that
/// read them at the next step; all of it only when the loop runs a step at least.
fn step_lanes_loop(
    out: &mut String,
    ast: &Ast,
    lanes: i64,
    carries: &[[usize; 4]],
    depth: usize,
    user: &mut UserPrinter<'_>,
) {
    let Ast::For {
        iter,
        init,
        cond,
        inc,
        body,
    } = ast
    else {
        return stmt(out, ast, depth, user);
    };
    let plain = |out: &mut String, user: &mut UserPrinter<'_>, depth: usize| {
        let head = [iter.as_str(), &expr(init), &expr(cond), &expr(inc)];
        plain_for(out, head, body, depth, user)
    };
    let l = lanes as usize;
    let Some(steps) = polyhedral::step_groups(body, iter) else {
        return plain(out, user, depth);
    };
    let groups = &steps.groups;
    if groups.iter().any(|g| g.copies.len() % l != 0)
        || carries
            .iter()
            .any(|c| c[0] >= groups.len() || c[2] >= groups.len())
    {
        return plain(out, user, depth);
    }
    let vectors = group_vectors(groups, l);
    // The operands of group `g` held in registers (of kind `kind` only, with `Some`).
    let mask = |g: usize, kind: Option<usize>| {
        carries
            .iter()
            .filter(|c| c[0] == g && kind.is_none_or(|k| c[3] == k))
            .fold(0usize, |m, c| m | 1 << c[1])
    };
    let part = |g: usize, v: usize, what: StepWhat| {
        let group = &groups[g];
        let kind = match what {
            StepWhat::Carry(_) => Some(0),
            _ => None,
        };
        polyhedral::kernel_user(
            &group.stmt,
            KernelPart::Step(StepPart {
                what,
                vector: v,
                row: group.rows.trailing_zeros() as usize,
                carried: mask(g, kind),
            }),
        )
    };
    // The vector of group `h` over the rows of vector `first` of another group.
    let vector_of = |h: usize, first: usize| {
        vectors
            .iter()
            .find(|x| x.0 == h && x.1 == first)
            .map(|x| x.2)
    };
    if guards_contradict(&steps.guards) {
        return plain(out, user, depth);
    }
    let pad = "  ".repeat(depth);
    out.push_str("#if defined(TF_VBYTES)\n");
    let guarded = !steps.guards.is_empty();
    let mut inner = depth;
    if guarded {
        let conds: Vec<String> = steps.guards.iter().map(|c| paren(&expr(c))).collect();
        let _ = writeln!(out, "{pad}if ({}) {{", conds.join(" && "));
        inner += 1;
    }
    let ipad = "  ".repeat(inner);
    open_first_step(out, &ipad, iter, init, cond);
    let at = inner + 2;
    for &(g, first, v) in &vectors {
        user(
            out,
            &part(g, v, StepWhat::Decl),
            &groups[g].copies[first],
            at,
        );
    }
    for &(g, first, v) in &vectors {
        if mask(g, Some(0)) != 0 {
            for lane in 0..l {
                let args = &groups[g].copies[first + lane];
                user(out, &part(g, v, StepWhat::Carry(lane)), args, at);
            }
        }
    }
    let _ = writeln!(out, "{ipad}    for (; {}; {iter} += 1) {{", expr(cond));
    for &(g, first, v) in &vectors {
        for lane in 0..l {
            let args = &groups[g].copies[first + lane];
            user(out, &part(g, v, StepWhat::Gather(lane)), args, at + 1);
        }
        for &[_, n, h, _] in carries.iter().filter(|c| c[0] == g && c[3] == 1) {
            if let Some(u) = vector_of(h, first) {
                let (o, w) = (polyhedral::step_operand(v, n), polyhedral::step_written(u));
                let _ = writeln!(out, "{}{o} = {w};", "  ".repeat(at + 1));
            }
        }
        user(
            out,
            &part(g, v, StepWhat::Step),
            &groups[g].copies[first],
            at + 1,
        );
        for lane in 0..l {
            let args = &groups[g].copies[first + lane];
            user(out, &part(g, v, StepWhat::Scatter(lane)), args, at + 1);
        }
    }
    // The written vectors to the operands that read them at the next step.
    for &[g, n, h, _] in carries.iter().filter(|c| c[3] == 0) {
        for &(_, first, v) in vectors.iter().filter(|x| x.0 == g) {
            if let Some(u) = vector_of(h, first) {
                let _ = writeln!(
                    out,
                    "{ipad}      {} = {};",
                    polyhedral::step_operand(v, n),
                    polyhedral::step_written(u)
                );
            }
        }
    }
    let _ = writeln!(out, "{ipad}    }}");
    let _ = writeln!(out, "{ipad}  }}");
    let _ = writeln!(out, "{ipad}}}");
    if guarded {
        let _ = writeln!(out, "{pad}}} else {{");
        plain(out, user, depth + 1);
        let _ = writeln!(out, "{pad}}}");
    }
    out.push_str("#else\n");
    plain(out, user, depth);
    out.push_str("#endif\n");
}

/// `for (long <iter> = <init>; <cond>; <iter> += <step>) {` at `depth`.
fn open_loop(out: &mut String, l: &KernelLoop, step: &Expr, depth: usize) {
    let _ = writeln!(
        out,
        "{}for (long {} = {}; {}; {} += {}) {{",
        "  ".repeat(depth),
        l.iter,
        expr(&l.init),
        expr(&l.cond),
        l.iter,
        expr(step)
    );
}

/// Kernel `k`'s statement arguments at row `r` of a block.
fn at_row(k: &Kernel, r: i64) -> Vec<Expr> {
    args_at_row(&k.args, &k.loops[0].iter, r)
}

/// `args` with the row iterator `row` at `row + r`.
fn args_at_row(args: &[Expr], row: &str, r: i64) -> Vec<Expr> {
    args.iter()
        .map(|a| offset(a, row, Expr::Int(r.to_string())))
        .collect()
}

/// The elements of one vector of `v`'s lanes: `TF_VBYTES / <element bytes>`.
fn vector_elements(v: &VectorLanes) -> Expr {
    Expr::Op(
        OpKind::PdivQ,
        vec![
            Expr::Id("TF_VBYTES".into()),
            Expr::Int(v.elem_bytes.to_string()),
        ],
    )
}

/// Opens the half-vector run of lanes that end inside a block (64-byte vectors only): `TF_VD` and
/// `TF_VF` read 32 bytes until [`WHOLE_VECTORS`] (their types are macros of [`HELPERS`]).
const HALF_VECTORS: &str = "\
#if TF_VBYTES == 64
#undef TF_VD_TYPE
#undef TF_VF_TYPE
#define TF_VD_TYPE tf_vd32
#define TF_VF_TYPE tf_vf32
";

/// Closes [`HALF_VECTORS`]: the macros read whole vectors again.
const WHOLE_VECTORS: &str = "\
#undef TF_VD_TYPE
#undef TF_VF_TYPE
#define TF_VD_TYPE tf_vd
#define TF_VF_TYPE tf_vf
#endif
";

/// `e` with `iter` replaced by `iter + by`.
fn offset(e: &Expr, iter: &str, by: Expr) -> Expr {
    match e {
        Expr::Id(name) if name == iter => Expr::Op(OpKind::Add, vec![e.clone(), by]),
        Expr::Op(op, args) => Expr::Op(
            *op,
            args.iter().map(|a| offset(a, iter, by.clone())).collect(),
        ),
        other => other.clone(),
    }
}

/// `e` with identifier `from` renamed `to`.
fn renamed(e: &Expr, from: &str, to: &str) -> Expr {
    match e {
        Expr::Id(name) if name == from => Expr::Id(to.to_string()),
        Expr::Op(op, args) => Expr::Op(*op, args.iter().map(|a| renamed(a, from, to)).collect()),
        other => other.clone(),
    }
}

fn paren(s: &str) -> String {
    if s.starts_with('(') && balanced_outer(s) {
        s.to_string()
    } else {
        format!("({s})")
    }
}

/// Whether the parenthesis opening `s` closes at its last character.
fn balanced_outer(s: &str) -> bool {
    let mut depth = 0i32;
    for (k, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return k == s.len() - 1;
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn id(s: &str) -> Expr {
        Expr::Id(s.into())
    }
    fn int(v: i64) -> Expr {
        Expr::Int(v.to_string())
    }

    /// Guards that no value of their name meets (a strip every copy of which a small tile cuts)
    /// keep the jammed loop alone; others may hold.
    #[test]
    fn contradictory_guards_are_seen() {
        let cmp = |op, a: Expr, b: Expr| Expr::Op(op, vec![a, b]);
        let i = || id("i");
        assert!(guards_contradict(&[
            cmp(OpKind::Eq, i(), int(16)),
            cmp(OpKind::Eq, i(), int(0))
        ]));
        assert!(guards_contradict(&[
            cmp(OpKind::Ge, i(), int(4)),
            cmp(OpKind::Gt, int(4), i())
        ]));
        assert!(!guards_contradict(&[
            cmp(OpKind::Ge, i(), int(4)),
            cmp(OpKind::Le, i(), int(992))
        ]));
        assert!(!guards_contradict(&[
            cmp(OpKind::Eq, i(), int(16)),
            cmp(OpKind::Eq, id("j"), int(0))
        ]));
    }

    #[test]
    fn expressions_are_parenthesized_and_use_helpers() {
        let e = Expr::Op(
            OpKind::Min,
            vec![
                id("n"),
                Expr::Op(OpKind::Add, vec![id("c0"), int(31)]),
                int(-4),
            ],
        );
        assert_eq!(expr(&e), "tf_min(tf_min(n, (c0 + 31)), (-4))");
        let f = Expr::Op(
            OpKind::FdivQ,
            vec![Expr::Op(OpKind::Sub, vec![id("n"), int(1)]), int(32)],
        );
        assert_eq!(expr(&f), "tf_floord((n - 1), 32)");
    }

    #[test]
    fn loops_and_conditions_print_as_c() {
        let ast = Ast::For {
            iter: "c0".into(),
            init: int(0),
            cond: Expr::Op(OpKind::Le, vec![id("c0"), id("n")]),
            inc: int(1),
            body: Box::new(Ast::If {
                cond: Expr::Op(OpKind::Ge, vec![id("c0"), int(2)]),
                then: Box::new(Ast::User {
                    name: "S0".into(),
                    args: vec![id("c0")],
                }),
                els: None,
            }),
        };
        let mut out = String::new();
        stmt(&mut out, &ast, 1, &mut |out, name, args, depth| {
            let _ = writeln!(out, "{}{name}({});", "  ".repeat(depth), expr(&args[0]));
        });
        assert_eq!(out, "  for (long c0 = 0; (c0 <= n); c0 += 1) {\n    if (c0 >= 2) {\n      S0(c0);\n    }\n  }\n");
    }

    #[test]
    fn paren_keeps_single_outer_group_only() {
        assert_eq!(paren("(a) && (b)"), "((a) && (b))");
        assert_eq!(paren("(a && b)"), "(a && b)");
    }
}
