//! The polyhedral questions of the CUDA target (`taskgen::emit_cuda`), answered as plain data:
//! which point dimensions of a tile may run as GPU threads, which scalars private to each task
//! may be private to each thread, and which slab of each array a SCoP touches (what is copied
//! to the device).
//!
//! Parallel loops. For nest `k` with flat schedule `θ` (padded to the nest's common
//! depth, as [`crate::nest_body_ast`] pads it, so dimension `d` is the loop over iterator
//! `<prefix>d` of the task body), every dependence `D` (flow, anti, output) whose source and
//! target are both among the statements of a loop of the task body is mapped to schedule times,
//! `R = θ ∘ D ∘ θ⁻¹`. The loop, over dimension `d`, is *parallel* when `R` has no pair with equal
//! coordinates `0..d` and different coordinates `d`:
//! once every outer dimension is fixed (the tile coordinates, the outer point loops run by the
//! host, the constant dimensions ISL separates statements with), the iterations of a loop over
//! `d` touch nothing another iteration writes, so they may run at the same time, each running its
//! own inner loops in order. Pairs in different tiles differ on a tile coordinate and are ordered
//! by the task graph; pairs with different outer point coordinates by the host's sequential
//! launches. This is ISL's answer for the schedule actually emitted, never a guess from the
//! source loops.
//!
//! Thread-private scalars. A scalar private to each task ([`crate::task_private`]) was
//! scheduled expanded, so its dependences no longer order the iterations of the loops it was
//! expanded over, and the threads of a kernel may run such iterations at once. Each thread may
//! keep it in a variable of each iteration of its innermost thread loop when, for the kernels
//! of the nest's task body (each given by its statements and by how many leading schedule
//! dimensions one thread iteration fixes, [`KernelScope`]):
//! 1. no statement that accesses the scalar runs in two kernels;
//! 2. every flow pair of the scalar (exact, original order) has both ends in one kernel and
//!    equal coordinates on those fixed dimensions: same task, same host iterations, same thread
//!    iteration; a flow into or out of another nest fails this too;
//! 3. inside one such thread iteration, every pair of accesses to it, at least one a write,
//!    runs in its original order.
//!
//! Then each read finds its source's value in the thread's variable (the argument of
//! `privatize::one_variable_serves`, which checks 2 and 3). This is ISL's answer on the emitted
//! schedule: the flow relation is intersected with the "same kernel, same fixed prefix" pairs,
//! `θ_K ∘ E ∘ θ_K⁻¹` with `E` the equality of the first `fixed` dimensions.
//!
//! Slabs. For every array of rank at least one, the elements its accesses touch (each access
//! restricted to its statement's domain), projected on the outermost subscript, have a least and
//! a greatest value for each value of the parameters: `[lo, hi]`. Both are returned as code (the
//! plain [`Ast`] of the one-point set `Slab[lo]`, resp. `Slab[hi]`), so the host computes them
//! from the parameters at run time; an array never touched has none.

use crate::ast::Ast;
use crate::isl::{Ctx, Set, UnionMap, UnionSet};
use crate::maps::{input_error, names, pad_to_common_depth, projection, tuple};
use crate::scop::ScopSets;
use crate::{Dependences, NestId, Result, TiledSchedule};
use scop_ir::{ArrayId, Scop};

/// Tuple name of the user nodes of [`ArraySlab`]'s code.
pub const SLAB_NAME: &str = "Slab";

/// A loop of a task body: over dimension `dim` of its nest's padded flat schedule, with the
/// statements (`S3`) its body runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyLoop {
    pub dim: usize,
    pub statements: Vec<String>,
}

impl BodyLoop {
    /// The loop `for (iter ...) body` of a task body whose iterators are `<prefix><dim>`;
    /// `None` when `iter` is not such an iterator.
    pub fn of(iter: &str, body: &Ast, prefix: &str) -> Option<BodyLoop> {
        let dim = iter
            .strip_prefix(prefix)
            .and_then(|d| d.parse::<usize>().ok())?;
        let mut statements = Vec::new();
        users(body, &mut statements);
        statements.sort();
        statements.dedup();
        Some(BodyLoop { dim, statements })
    }
}

/// Every loop of the task body `ast` (iterators `<prefix><dim>`), in preorder.
pub fn body_loops(ast: &Ast, prefix: &str) -> Vec<BodyLoop> {
    fn walk(ast: &Ast, prefix: &str, out: &mut Vec<BodyLoop>) {
        match ast {
            Ast::Block(items) => items.iter().for_each(|i| walk(i, prefix, out)),
            Ast::For { iter, body, .. } => {
                out.extend(BodyLoop::of(iter, body, prefix));
                walk(body, prefix, out);
            }
            Ast::If { then, els, .. } => {
                walk(then, prefix, out);
                if let Some(e) = els {
                    walk(e, prefix, out);
                }
            }
            Ast::User { .. } => {}
            Ast::Kernel(k) => {
                walk(&k.fallback, prefix, out);
                walk(&k.tail, prefix, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(ast, prefix, &mut out);
    out
}

/// The names of the user nodes (statements) of `ast`.
fn users(ast: &Ast, out: &mut Vec<String>) {
    match ast {
        Ast::Block(items) => items.iter().for_each(|i| users(i, out)),
        Ast::For { body, .. } => users(body, out),
        Ast::If { then, els, .. } => {
            users(then, out);
            if let Some(e) = els {
                users(e, out);
            }
        }
        Ast::User { name, .. } => out.push(name.clone()),
        Ast::Kernel(k) => {
            users(&k.fallback, out);
            users(&k.tail, out);
        }
    }
}

/// For the loops `loops` of the task body of nest `nest` of `sched`: whether each, all outer
/// dimensions fixed, has independent iterations (see the module documentation; only the pairs
/// of dependent instances of the loop's own statements count, since other statements run in
/// other launches, ordered).
pub fn parallel_loops(
    scop: &Scop,
    deps: &Dependences,
    sched: &TiledSchedule,
    nest: NestId,
    loops: &[BodyLoop],
) -> Result<Vec<bool>> {
    let the_nest = sched.nests.get(nest.index()).ok_or_else(|| {
        crate::Error::InvalidInput(format!(
            "nest {nest} does not exist (the schedule has {})",
            sched.nests.len()
        ))
    })?;
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    let all = crate::deps::all_of(ctx, deps)?;
    let schedule = UnionMap::read(ctx, &the_nest.schedule)
        .map_err(|e| input_error("nest schedule", &the_nest.schedule, e))?;
    let (schedule, depth) = pad_to_common_depth(schedule)?;
    let domains = sets.domains.sets()?;
    let s = names("s", depth);
    let t = names("t", depth);
    loops
        .iter()
        .map(|l| {
            if l.dim >= depth {
                return Err(crate::Error::InvalidInput(format!(
                    "nest {nest} has {depth} schedule dimensions, not {}",
                    l.dim + 1
                )));
            }
            let mut inside = UnionSet::empty(ctx)?;
            for d in &domains {
                if d.tuple_name().is_some_and(|n| l.statements.contains(&n)) {
                    inside = inside.union(UnionSet::from_set(d.clone())?)?;
                }
            }
            let rel = all
                .clone()
                .intersect_domain(inside.clone())?
                .intersect_range(inside)?;
            let rel = rel
                .apply_domain(schedule.clone())?
                .apply_range(schedule.clone())?;
            let mut eqs: Vec<String> = (0..l.dim).map(|i| format!("{} = {}", s[i], t[i])).collect();
            eqs.push(format!(
                "({d1} < {d2} or {d1} > {d2})",
                d1 = s[l.dim],
                d2 = t[l.dim]
            ));
            let carried = format!(
                "{{ {} -> {} : {} }}",
                tuple("", &s),
                tuple("", &t),
                eqs.join(" and ")
            );
            rel.intersect(UnionMap::read(ctx, &carried)?)?.is_empty()
        })
        .collect()
}

/// A kernel of a task body, as the private scalars see it: the statements it runs, and how
/// many leading dimensions of its nest's padded flat schedule are fixed for one iteration of
/// its innermost thread loop (that dimension plus one; for a kernel of one thread, the
/// dimensions its host loops fix; more than the depth means all of them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelScope {
    pub statements: Vec<String>,
    pub fixed: usize,
}

/// Whether the private scalar `array` of `scop` (one [`crate::TaskPrivate`], so its flow never
/// crosses tasks) may live, in nest `nest` of `sched`, in a variable of each iteration of the
/// innermost thread loop of the kernels `kernels` of the nest's task body: `None` if so, or why
/// not. The conditions (see the module documentation): the kernels that access the scalar run
/// different statements; each flow pair of the scalar lies in one kernel with equal first
/// `fixed` schedule coordinates (one launch, one thread, one iteration); and inside such an
/// iteration conflicting accesses keep their original order.
pub fn thread_private(
    scop: &Scop,
    array: ArrayId,
    sched: &TiledSchedule,
    nest: NestId,
    kernels: &[KernelScope],
) -> Result<Option<String>> {
    let the_nest = sched.nests.get(nest.index()).ok_or_else(|| {
        crate::Error::InvalidInput(format!(
            "nest {nest} does not exist (the schedule has {})",
            sched.nests.len()
        ))
    })?;
    let name = &scop.array(array).name;
    let accessing: Vec<String> = the_nest
        .statements
        .iter()
        .filter(|&&s| {
            scop.statements[s.index()]
                .accesses
                .iter()
                .any(|a| a.array == array)
        })
        .map(|s| s.to_string())
        .collect();
    if accessing.is_empty() {
        return Ok(None);
    }
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    let Some((reads, writes, flow)) =
        crate::privatize::scalar_flow(ctx, scop, &sets, scop.array(array))?
    else {
        return Ok(Some(format!(
            "a read of `{name}` reads its value from before the SCoP"
        )));
    };
    let schedule = UnionMap::read(ctx, &the_nest.schedule)
        .map_err(|e| input_error("nest schedule", &the_nest.schedule, e))?;
    let (schedule, depth) = pad_to_common_depth(schedule)?;
    let domains = sets.domains.sets()?;
    let mut seen: Vec<&String> = Vec::new();
    let mut same = UnionMap::empty(ctx)?;
    let mut nest_domain = UnionSet::empty(ctx)?;
    for kernel in kernels {
        let mut inside = UnionSet::empty(ctx)?;
        for d in &domains {
            if d.tuple_name()
                .is_some_and(|n| kernel.statements.contains(&n))
            {
                inside = inside.union(UnionSet::from_set(d.clone())?)?;
            }
        }
        nest_domain = nest_domain.union(inside.clone())?;
        for s in kernel.statements.iter().filter(|s| accessing.contains(s)) {
            if seen.contains(&s) {
                return Ok(Some(format!(
                    "statement {s}, which accesses `{name}`, runs in two kernels"
                )));
            }
            seen.push(s);
        }
        let prefix: Vec<usize> = (0..kernel.fixed.min(depth)).collect();
        let p = schedule
            .clone()
            .intersect_domain(inside)?
            .apply_range(UnionMap::read(ctx, &projection(depth, "", &prefix))?)?;
        same = same.union(p.clone().apply_range(p.reverse()?)?)?;
    }
    if let Some(s) = accessing.iter().find(|s| !seen.contains(s)) {
        return Ok(Some(format!(
            "statement {s}, which accesses `{name}`, is in no kernel"
        )));
    }
    // The flow of the scalar into or out of this nest's statements.
    let flow = flow
        .clone()
        .intersect_domain(nest_domain.clone())?
        .union(flow.intersect_range(nest_domain)?)?;
    if !crate::privatize::one_variable_serves(&sets, &reads, &writes, &flow, &same, &schedule)? {
        return Ok(Some(format!(
            "a value of `{name}` flows from one GPU thread or launch to another"
        )));
    }
    Ok(None)
}

/// The accessed range `[lo, hi]` of an array's outermost subscript, as code: each AST has
/// exactly one user node [`SLAB_NAME`] (for the parameters' values where the array is touched)
/// whose one argument is the bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArraySlab {
    pub lo: Ast,
    pub hi: Ast,
}

/// For each array of `scop` (indexed like `scop.arrays`): its slab, `None` for a scalar or an
/// array no statement touches.
pub fn array_slabs(scop: &Scop) -> Result<Vec<Option<ArraySlab>>> {
    let mut out = Vec::with_capacity(scop.arrays.len());
    for array in &scop.arrays {
        out.push(match array.rank {
            0 => None,
            _ => slab(scop, array.rank, &array.isl_name)?,
        });
    }
    Ok(out)
}

fn slab(scop: &Scop, rank: usize, isl_name: &str) -> Result<Option<ArraySlab>> {
    let (lo, hi) = {
        let ctx = Ctx::shared()?;
        let sets = ScopSets::parse(ctx, scop)?;
        let x = names("x", rank);
        let first = UnionMap::read(
            ctx,
            &format!("{{ {} -> {SLAB_NAME}[x0] }}", tuple(isl_name, &x)),
        )?;
        let touched = sets.reads.union(sets.writes)?.apply_range(first)?.range()?;
        let mut sets = touched.coalesce()?.sets()?;
        if sets.len() != 1 {
            return Ok(None); // untouched (a slab is one space)
        }
        let set = sets.remove(0);
        let negate = UnionMap::read(ctx, &format!("{{ {SLAB_NAME}[x] -> {SLAB_NAME}[-x] }}"))?;
        let lo = set.clone().lexmin()?.to_str()?;
        let hi = negated(negated(set, &negate)?.lexmin()?, &negate)?.to_str()?;
        (lo, hi)
    };
    Ok(Some(ArraySlab {
        lo: crate::points_ast(scop, &lo, "tf_slab")?,
        hi: crate::points_ast(scop, &hi, "tf_slab")?,
    }))
}

/// `{ Slab[-x] : Slab[x] in set }`.
fn negated<'c>(set: Set<'c>, negate: &UnionMap<'c>) -> Result<Set<'c>> {
    let mut sets = UnionMap::from_map(set.identity()?)?
        .apply_range(negate.clone())?
        .range()?
        .sets()?;
    match sets.pop() {
        Some(s) if sets.is_empty() => Ok(s),
        _ => Err(crate::Error::InvalidInput(
            "the negated slab is not one set".into(),
        )),
    }
}
