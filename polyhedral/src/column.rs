//! Columns in buffers: in a full tile whose innermost loops are a row loop `j` around a loop
//! `d` whose statements all assign one element, one of them in a reduction loop `k` that reads
//! a column of an array along `k` (nussinov's `table[i][j] = max(table[i][j], table[i][k] +
//! table[k + 1][j])`, `i = j - d`), the column is copied once per `j` into a buffer on the
//! task's stack, the element is kept in a local accumulator over the statements of one `d`,
//! and the reduction loop reads the buffer:
//!
//! ```text
//! for (j = ..; j <= ..; j += 1) {
//!   int tf_col[2500];
//!   for (k = lo; k <= hi; k += 1) tf_col[k + 1] = table[k + 1][j];   // the rows read
//!   for (d = ..; d <= ..; d += 1) {
//!     int tf_acc0 = table[j - d][j];
//!     tf_acc0 = max(tf_acc0, table[j - d][j - 1]);   // the statements before the loop
//!     for (k = j - d + 1; k < j; k += 1)
//!       tf_acc0 = max(tf_acc0, table[j - d][k] + tf_col[k + 1]);
//!     table[j - d][j] = tf_acc0; tf_col[j - d] = tf_acc0;
//!   }
//! }
//! ```
//!
//! A column walks memory a row apart at every step (10 KB in nussinov at LARGE), one cache line
//! per element and no prefetching across pages; the element the loop assigns, read and written
//! through the same array, stays in memory at every step, since the C compiler cannot tell it
//! from the other reads. In the buffer the reduction reads two contiguous rows into a register,
//! which the C compiler vectorizes (an integer `max` is exact in any order; the code keeps the
//! statement's own order anyway, lane by lane, for other types).
//!
//! Measured on nussinov at LARGE (Xeon, medians of 7 runs in rounds, the same hour): 3.93 s ->
//! 0.69 s on one thread and 2.01 -> 0.44 s on two, against 4.19 s for gcc's original; the
//! column's accesses had also cost a TLB miss each (the table is 25 MB), which made the old
//! code's times vary from 2.4 to 4.4 s between runs. No other PolyBench kernel has the shape.
//!
//! Nothing is reordered: every instance runs where it ran, and the buffer holds the column's
//! current values wherever they are read. Checked with ISL on the piece's tiles:
//! - in one iteration of `d`, every statement assigns the same element, and no other access of
//!   them reaches it (it lives in the accumulator meanwhile: `scop_ir::lanes::accumulator_refusal`
//!   says the text spells it apart);
//! - in one iteration of `j`, the column's elements differ only in their first subscript, and
//!   each is a function of `k`; the element assigned is on that column when the array is the
//!   same (its store also updates the buffer), and no statement writes the array otherwise;
//! - the fill's range, the hull of the reduction loop's range over `d` (its bounds at `d`'s
//!   first and last values), is exactly the set of `k` the statement runs in that iteration of
//!   `j`: the buffer copies nothing that the tile does not read (another task may be writing it).
//!
//! The buffer is indexed by the row itself, from 0 to the last row the column reads or the
//! statements write anywhere in the piece, and must fit in [`MAX_COLUMN_BYTES`].

use crate::ast::{kernel_user, Ast, Expr, KernelPart, OpKind};
use crate::astgen::PointSchedule;
use crate::isl::{Set, UnionMap};
use crate::kernel::{accumulates_locally, in_piece, instance_pairs, sole_writer};
use crate::maps::{names, params_prefix, tuple};
use crate::tile_size::element_bytes;
use crate::Result;
use scop_ir::{ArrayId, Scop};

/// The largest column buffer, in bytes (it lives on the task's stack).
pub const MAX_COLUMN_BYTES: u64 = 64 * 1024;

/// `plain` (the code of the full tiles `piece`) with every loop nest that qualifies (see the
/// module doc) reading its column from a buffer, and what it did for `-v`; `None` when no nest
/// qualifies.
pub(crate) fn column_buffers(
    scop: &Scop,
    points: &PointSchedule<'_>,
    plain: &Ast,
    piece: &Set<'_>,
    private: &[ArrayId],
) -> Result<Option<(Ast, Vec<String>)>> {
    let mut out = plain.clone();
    let mut done = Vec::new();
    rewrite(
        &mut out,
        &mut |node| column_nest(scop, points, node, piece, private),
        &mut done,
    )?;
    Ok((!done.is_empty()).then_some((out, done)))
}

/// A node rewritten, and what was done for `-v`.
type Rewritten = (Ast, String);

/// Replaces each node of `ast` that `f` rewrites (outermost first), collecting what it says.
fn rewrite(
    ast: &mut Ast,
    f: &mut dyn FnMut(&Ast) -> Result<Option<Rewritten>>,
    done: &mut Vec<String>,
) -> Result<()> {
    if let Some((new, what)) = f(ast)? {
        *ast = new;
        done.push(what);
        return Ok(());
    }
    match ast {
        Ast::Block(items) => {
            for item in items {
                rewrite(item, f, done)?;
            }
        }
        Ast::For { body, .. } => rewrite(body, f, done)?,
        Ast::If { then, els, .. } => {
            rewrite(then, f, done)?;
            if let Some(e) = els {
                rewrite(e, f, done)?;
            }
        }
        Ast::User { .. } | Ast::Kernel(_) => {}
    }
    Ok(())
}

/// The node a block of one item stands for.
/// The items of `ast` with nested blocks opened.
fn flatten<'a>(ast: &'a Ast, out: &mut Vec<&'a Ast>) {
    match ast {
        Ast::Block(items) => items.iter().for_each(|i| flatten(i, out)),
        other => out.push(other),
    }
}

/// The last value of a loop whose condition is `iter <= e` or `iter < e`.
fn last_value(iter: &str, cond: &Expr) -> Option<Expr> {
    let Expr::Op(op, operands) = cond else {
        return None;
    };
    let [Expr::Id(x), bound] = operands.as_slice() else {
        return None;
    };
    if x != iter {
        return None;
    }
    match op {
        OpKind::Le => Some(bound.clone()),
        OpKind::Lt => Some(Expr::Op(
            OpKind::Sub,
            vec![bound.clone(), Expr::Int("1".into())],
        )),
        _ => None,
    }
}

/// `e` with identifier `id` replaced by `by`.
fn substituted(e: &Expr, id: &str, by: &Expr) -> Expr {
    match e {
        Expr::Id(x) if x == id => by.clone(),
        Expr::Op(op, args) => Expr::Op(*op, args.iter().map(|a| substituted(a, id, by)).collect()),
        other => other.clone(),
    }
}

/// `e` as ISL text, collecting the identifiers it mentions; `None` for operations ISL's affine
/// syntax does not have.
pub(crate) fn isl_text(e: &Expr, ids: &mut Vec<String>) -> Option<String> {
    Some(match e {
        Expr::Int(v) => v.clone(),
        Expr::Id(x) => {
            if !ids.contains(x) {
                ids.push(x.clone());
            }
            x.clone()
        }
        Expr::Op(op, args) => {
            let mut parts = Vec::with_capacity(args.len());
            for a in args {
                parts.push(isl_text(a, ids)?);
            }
            match (op, parts.as_slice()) {
                (OpKind::Add, [a, b]) => format!("({a} + {b})"),
                (OpKind::Sub, [a, b]) => format!("({a} - {b})"),
                (OpKind::Mul, [a, b]) => format!("({a} * {b})"),
                (OpKind::Minus, [a]) => format!("(-{a})"),
                (OpKind::Min, [_, ..]) => format!("min({})", parts.join(", ")),
                (OpKind::Max, [_, ..]) => format!("max({})", parts.join(", ")),
                (OpKind::FdivQ | OpKind::PdivQ, [a, b]) if matches!(args[1], Expr::Int(_)) => {
                    format!("floor(({a}) / {b})")
                }
                _ => return None,
            }
        }
    })
}

/// The node `ast` rewritten as in the module doc, with what it does, when it is a `j` loop that
/// qualifies.
fn column_nest(
    scop: &Scop,
    points: &PointSchedule<'_>,
    ast: &Ast,
    piece: &Set<'_>,
    private: &[ArrayId],
) -> Result<Option<Rewritten>> {
    // The shape: `j { d { statements and one loop k { statement } } }`.
    let Some(j) = ast.unit_loop() else {
        return Ok(None);
    };
    let Some(d) = j.body.unit_loop() else {
        return Ok(None);
    };
    let mut items = Vec::new();
    flatten(d.body, &mut items);
    let mut users: Vec<(&str, &[Expr])> = Vec::new();
    let mut reduction = None;
    for item in &items {
        match item {
            Ast::User { name, args } => users.push((name, args)),
            _ => {
                let Some(k) = item.unit_loop() else {
                    return Ok(None);
                };
                let (Some(Ast::User { name, args }), None) = (k.body.sole(), &reduction) else {
                    return Ok(None);
                };
                reduction = Some((k, name.as_str(), args.as_slice()));
            }
        }
    }
    let (Some((k, red_name, red_args)), Some(&(first_name, first_args))) =
        (reduction, users.first())
    else {
        return Ok(None);
    };
    let dim = |it: &str| points.iterators.iter().position(|x| x == it);
    let (Some(pj), Some(pd), Some(pk)) = (dim(j.iter), dim(d.iter), dim(k.iter)) else {
        return Ok(None);
    };
    if !(pj < pd && pd < pk) {
        return Ok(None);
    }
    // The statements, each writing one element of one array, the same for all.
    let mut stmts = Vec::new();
    for name in users.iter().map(|u| u.0).chain([red_name]) {
        let Some((stmt, write)) = sole_writer(scop, name, private) else {
            return Ok(None);
        };
        if !stmts
            .iter()
            .any(|(s, _, _): &(&scop_ir::Statement, _, _)| s.id == stmt.id)
        {
            stmts.push((stmt, write, name));
        }
    }
    let written = stmts[0].1.array;
    if stmts.iter().any(|(_, w, _)| w.array != written) {
        return Ok(None);
    }
    if !stmts
        .iter()
        .all(|(stmt, write, _)| accumulates_locally(scop, stmt, write))
    {
        return Ok(None);
    }
    // The column: the reduction statement's iterator that is `k`, and its occurrence along it.
    let Some((red_stmt, _)) = sole_writer(scop, red_name, private) else {
        return Ok(None);
    };
    let Some(red) = red_args.iter().position(|e| *e == Expr::Id(k.iter.clone())) else {
        return Ok(None);
    };
    let Some((column_rel, column_iters, array)) =
        scop_ir::lanes::column_relation(scop, red_stmt, red)
    else {
        return Ok(None);
    };
    // The fill prints the column at `d`'s first value: the column's iterators may move with
    // `k` (through `red` alone) but not with `d`.
    let inner = [d.iter.as_str(), k.iter.as_str()];
    if column_iters.iter().any(|&q| {
        let a = red_args.get(q);
        q != red && a.is_none_or(|a| inner.iter().any(|v| a.mentions(v)))
    }) || red_args
        .iter()
        .enumerate()
        .any(|(q, a)| q != red && a.mentions(k.iter))
    {
        return Ok(None);
    }
    let arr = scop.array(array);
    if arr.rank < 2 {
        return Ok(None);
    }
    let ctx = points.context.ctx();
    let column = UnionMap::read(ctx, &column_rel)?;
    if !red_stmt
        .accesses
        .iter()
        .filter(|a| a.array == array)
        .map(|a| UnionMap::read(ctx, &a.relation)?.is_equal(&column))
        .collect::<Result<Vec<bool>>>()?
        .contains(&true)
    {
        return Ok(None);
    }
    // The fill's range: `k`'s bounds at `d`'s first and last values.
    let (Some(k_last), Some(d_last)) = (last_value(k.iter, k.cond), last_value(d.iter, d.cond))
    else {
        return Ok(None);
    };
    let hull = |e: &Expr, op: OpKind| {
        if e.mentions(d.iter) {
            Expr::Op(
                op,
                vec![
                    substituted(e, d.iter, d.init),
                    substituted(e, d.iter, &d_last),
                ],
            )
        } else {
            e.clone()
        }
    };
    let (lo, hi) = (hull(k.init, OpKind::Min), hull(&k_last, OpKind::Max));
    if lo.mentions(k.iter) || hi.mentions(k.iter) {
        return Ok(None);
    }

    // The checks, on the schedule of the piece's tiles restricted to these statements.
    let all = in_piece(points, piece)?;
    let mut sched = UnionMap::empty(ctx)?;
    let mut red_sched = UnionMap::empty(ctx)?;
    for m in all.maps()? {
        let name = m.tuple_name(crate::isl::Side::In);
        if stmts.iter().any(|s| Some(s.2) == name.as_deref()) {
            if name.as_deref() == Some(red_name) {
                red_sched = red_sched.union(UnionMap::from_map(m.clone())?)?;
            }
            sched = sched.union(UnionMap::from_map(m)?)?;
        }
    }
    let o = names("o", points.iterators.len());
    let key = |dims: &[usize]| -> Result<UnionMap<'_>> {
        let kept: Vec<String> = dims.iter().map(|&q| o[q].clone()).collect();
        UnionMap::read(
            ctx,
            &format!("{{ {} -> {} }}", tuple("", &o), tuple("", &kept)),
        )
    };
    let upto = |p: usize| (0..=p).collect::<Vec<usize>>();
    let mut writes = UnionMap::empty(ctx)?;
    let mut others = UnionMap::empty(ctx)?;
    for (stmt, write, _) in &stmts {
        writes = writes.union(UnionMap::read(ctx, &write.relation)?)?;
        for a in stmt
            .accesses
            .iter()
            .filter(|a| a.relation != write.relation)
        {
            others = others.union(UnionMap::read(ctx, &a.relation)?)?;
        }
    }
    let elements = sched.clone().reverse()?.apply_range(writes.clone())?;
    // One element per iteration of `d`, which no other access reaches meanwhile.
    if !elements
        .clone()
        .apply_domain(key(&upto(pd))?)?
        .is_single_valued()?
    {
        return Ok(None);
    }
    let same_d = instance_pairs(&sched, &o, &|q, a, b| {
        (q <= pd).then(|| format!("{a} = {b}"))
    })?;
    let instances = sched.clone().domain()?;
    let reach = writes
        .intersect_domain(instances)?
        .apply_range(others.reverse()?)?;
    if !reach.intersect(same_d)?.is_empty()? {
        return Ok(None);
    }
    // The column: a function of `k` in each iteration of `j`, whose elements differ only in
    // their first subscript; the element assigned on it, or its array not written.
    let mut jk = upto(pj);
    jk.push(pk);
    let read = red_sched.clone().reverse()?.apply_range(column)?;
    if !read.clone().apply_domain(key(&jk)?)?.is_single_valued()? {
        return Ok(None);
    }
    let a: Vec<String> = names("a", arr.rank);
    let mut b = a.clone();
    b[0] = "b0".into();
    let same_column = UnionMap::read(
        ctx,
        &format!(
            "{{ {} -> {} }}",
            tuple(&arr.isl_name, &a),
            tuple(&arr.isl_name, &b)
        ),
    )?;
    let read_j = read.apply_domain(key(&upto(pj))?)?;
    if !read_j
        .clone()
        .reverse()?
        .apply_range(read_j.clone())?
        .is_subset(&same_column)?
    {
        return Ok(None);
    }
    let mirrored = written == array;
    // The buffer's rows: from 0 to the last the column reads or the statements write.
    let mut touched = read_j.clone().range()?;
    if mirrored {
        touched = touched.union(elements.clone().range()?)?;
    }
    let mut rows = 0i64;
    for set in touched.sets()? {
        match set.dim_range(0)? {
            Some((lo, hi)) if lo >= 0 => rows = rows.max(hi + 1),
            _ => return Ok(None),
        }
    }
    if rows as u64 * element_bytes(&arr.elem_type) > MAX_COLUMN_BYTES {
        return Ok(None);
    }
    if mirrored {
        let written_j = elements.apply_domain(key(&upto(pj))?)?;
        if !written_j
            .reverse()?
            .apply_range(read_j)?
            .is_subset(&same_column)?
        {
            return Ok(None);
        }
    }
    // The fill's range is exactly the `k` the statement runs in each iteration of `j`.
    let mut ids = Vec::new();
    let (Some(lo_text), Some(hi_text)) = (isl_text(&lo, &mut ids), isl_text(&hi, &mut ids)) else {
        return Ok(None);
    };
    let x: Vec<String> = points.iterators[..=pj].to_vec();
    let params: Vec<String> = ids.into_iter().filter(|i| !x.contains(i)).collect();
    let mut from = x.clone();
    from.push("tf_kk".into());
    let mut to = x.clone();
    to.push("tf_kf".into());
    let range = UnionMap::read(
        ctx,
        &format!(
            "{}{{ {} -> {} : {lo_text} <= tf_kf <= {hi_text} }}",
            params_prefix(&params),
            tuple("", &from),
            tuple("", &to)
        ),
    )?;
    let runs = red_sched.apply_range(key(&jk)?)?;
    let filled = runs.clone().apply_range(range)?.range()?;
    if !filled.is_equal(&runs.range()?)? {
        return Ok(None);
    }

    // The new code.
    let user = |name: &str, part: KernelPart, args: &[Expr]| Ast::User {
        name: kernel_user(name, part),
        args: args.to_vec(),
    };
    let fill_iter = format!("{}_col", k.iter);
    let fill_args: Vec<Expr> = red_args
        .iter()
        .map(|e| {
            substituted(
                &substituted(e, k.iter, &Expr::Id(fill_iter.clone())),
                d.iter,
                d.init,
            )
        })
        .collect();
    let fill = Ast::For {
        iter: fill_iter.clone(),
        init: lo,
        cond: Expr::Op(OpKind::Le, vec![Expr::Id(fill_iter), hi]),
        inc: Expr::Int("1".into()),
        body: Box::new(user(red_name, KernelPart::ColumnFill(red), &fill_args)),
    };
    let mut body = vec![user(first_name, KernelPart::Load(0), first_args)];
    for item in &items {
        match item {
            Ast::User { name, args } => body.push(user(name, KernelPart::Accumulate(0), args)),
            _ => body.push(Ast::For {
                iter: k.iter.clone(),
                init: k.init.clone(),
                cond: k.cond.clone(),
                inc: Expr::Int("1".into()),
                body: Box::new(user(
                    red_name,
                    KernelPart::ColumnAccumulate(red, 0),
                    red_args,
                )),
            }),
        }
    }
    let store = match mirrored {
        true => KernelPart::ColumnStore(0),
        false => KernelPart::Store(0),
    };
    body.push(user(first_name, store, first_args));
    let d_loop = Ast::For {
        iter: d.iter.clone(),
        init: d.init.clone(),
        cond: d.cond.clone(),
        inc: Expr::Int("1".into()),
        body: Box::new(Ast::Block(body)),
    };
    let j_loop = Ast::For {
        iter: j.iter.clone(),
        init: j.init.clone(),
        cond: j.cond.clone(),
        inc: Expr::Int("1".into()),
        body: Box::new(Ast::Block(vec![
            user(
                red_name,
                KernelPart::ColumnDecl(red, rows as usize),
                red_args,
            ),
            fill,
            d_loop,
        ])),
    };
    Ok(Some((
        j_loop,
        format!("{red_name} reads a column of {} from a buffer", arr.name),
    )))
}
