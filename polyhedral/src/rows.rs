//! Jammed rows as the lanes of vectors: a reduction loop that holds several rows of a
//! matrix-vector product (gesummv's `tmp[i] = A[i][j] * x[j] + tmp[i]` for rows `i .. i + 7`,
//! jammed by [`crate::chains`]) runs the rows in the lanes of vectors, four steps of the loop at
//! a time, with each row's operand read as a vector along the loop and the vectors of four rows
//! transposed in registers:
//!
//! ```text
//! acc = { tmp[i], tmp[i + 1], tmp[i + 2], tmp[i + 3] };
//! for (j = lo; j + 3 <= hi; j += 4) {
//!   t[0 .. 3] = A[i + 0 .. 3][j .. j + 3];      four vector loads, one per row
//!   transpose(t);                               t[k] = A[i .. i + 3][j + k]
//!   acc = t[0] * x[j] + acc;  acc = t[1] * x[j + 1] + acc;  ...  (x[j + k] broadcast)
//! }
//! the last steps one by one, each row on its lane; then tmp[i .. i + 3] = acc
//! ```
//!
//! Each lane computes its row's statement with the same operations in the same order as the
//! jammed code (the additions into one element stay in the loop's order), so the results are
//! bitwise the same; what changes is that the multiplications and additions of four rows are
//! one vector operation each, and the operands' loads are vector loads, where the jammed code
//! ran them one element at a time or as in-order vector reductions with a shuffle per element.
//! The vectors are 32 bytes ([`ROW_LANE_BYTES`]: four doubles, eight floats) on every vector
//! size the kernels are compiled for: the rows of one vector are as many chains, and with eight
//! rows jammed two vectors a statement run side by side. On one Zen 5 core (AVX-512), a
//! standalone gesummv at EXTRALARGE ran its eight jammed rows in 4.46 ms scalar, 4.41 ms as two
//! 4-lane vectors and 4.30 ms as one 8-lane one, against 3.2-3.9 ms for a plain sum of the
//! same arrays (the memory's bound) and 22.5 ms for the original loop compiled alone. The
//! whole kernels at EXTRALARGE against the eight jammed rows (one thread, medians of 11 in
//! rounds): atax 2.19 -> 2.06 ms, gemver 14.4 -> 14.0 ms, gesummv 4.80 -> 4.67 ms (gcc's
//! original 5.4); on two threads, where the two cores share the memory's bandwidth, level.
//!
//! It applies to an innermost loop of a tile whose body is nothing but copies of statements
//! (the jammed rows) where, for each statement:
//! - the copies differ only in iterators other than the loop's (the rows), and their number
//!   is a multiple of the lanes;
//! - the statement writes one element, which the loop does not move and the rows do, and which
//!   only that statement's spellings of it reach in the loop (no other statement of the loop
//!   touches the array, the statement reads it only there): the element lives in a lane of an
//!   accumulator from before the loop to after it, and distinct copies write distinct elements
//!   (checked with ISL on the statement's access);
//! - every other occurrence is either contiguous along the loop and moves with the rows (a
//!   vector per row, transposed) or does not move with the rows (a scalar for all the lanes),
//!   and the text means the same on vectors (`scop_ir::lanes::RowStatement::refusal`).
//!
//! Then the only writes in the loop are the accumulators', each reached only by its own chain,
//! so reads may run early (the operands four steps ahead) and chains side by side in any order
//! that keeps each chain's own. The loop is printed under `#if defined(TF_VBYTES)` with the
//! jammed loop as it was otherwise; it runs only when the loop does at least one step (the
//! accumulators are stored after it, and a loop of no step must write nothing).
//!
//! ## Accumulators as lanes
//!
//! The accumulator kernels of [`crate::kernel`] (a block of eight rows of a sum in a full tile,
//! each row's element in a variable: mvt's, bicg's, atax's, gemver's) are that same jammed loop
//! once their rows are written out, and where it qualifies as above ([`accumulator_lanes`])
//! they are printed as lanes too under `#if defined(TF_VBYTES)`, as accumulators otherwise. A
//! statement may read the array it writes at other elements here (trisolv's `x[i] -= L[i][j] *
//! x[j]`): the kernel has checked that no other access of the tile reaches an element that a
//! block of rows holds, so those elements do not change while the block runs, and reading them
//! steps ahead reads what the statement would. On the Zen 5 at EXTRALARGE (medians of 15 in
//! rounds, one thread / two): trisolv 4.24 -> 3.23 ms / 2.44 -> 2.21, mvt 7.71 -> 6.28 / 4.56 ->
//! 4.02, bicg 1.78 -> 1.51 / 0.98 -> 0.88, atax 1.57 -> 1.53 / 1.24 -> 1.21, gemver level (14.2
//! -> 14.0 / 8.07 -> 7.88, medians of 21); ludcmp's sums keep their accumulators. By hand, mvt's as lanes
//! without the prefetches below ran 2.5% faster on one thread and level on two: the eight
//! scalar chains were not the bound, the sixteen row streams were.
//!
//! Each row's vector load comes with a prefetch of the same row 512 bytes ahead
//! (`TF_PREFETCH`): eight jammed rows of two matrices are sixteen streams, more than the
//! hardware's prefetchers follow at once (gesummv's rows run whole, 22 KB each at EXTRALARGE).
//! On the Zen 5 (EXTRALARGE, medians of 15 in rounds, one thread / two), 256 bytes ahead:
//! gesummv 4.53 -> 4.15 ms / 3.36 -> 3.17, gemver 13.5 -> 12.8 / 8.25 -> 7.99, atax 1.89 -> 1.78
//! / 1.23 -> 1.16; 512 bytes ahead against 256: gesummv 0.92 / 1.03, gemver 0.98 / 0.97, atax
//! 0.97 / 0.95 of its times; 128 bytes ahead 3-6% slower than 256 on gesummv. The scalar
//! accumulators gained nothing from the same prefetches (mvt, bicg: level or up to 8% slower)
//! and get none.

//!
//! ## Steps as lanes
//!
//! A loop whose jammed rows are recurrences rather than sums (adi's `p[i][j] = -c / (a *
//! p[i][j - 1] + b)` and `q[i][j] = (.. u[j][i] .. q[i][j - 1]) / (a * p[i][j - 1] + b)` along
//! `j`, rows `i .. i + 15` jammed by [`crate::chains`]) runs each statement's copies of four
//! consecutive rows as the lanes of one vector, one step of the loop at a time
//! ([`ROW_STEPS_USER`], printed by `c_ast`'s step lanes):
//!
//! ```text
//! P = { p[i][0], .., p[i + 3][0] }                  operands that the loop wrote one step before
//! for (j = lo; j <= hi; j++) {
//!   W = -c / (a * P + b);  p[i + 0 .. 3][j] = W;    the statement on vectors, stored per lane
//!   U = u[j][i .. i + 3];                           an operand contiguous across the rows: one load
//!   ...;  P = W;                                    the written vector is next step's operand
//! }
//! ```
//!
//! Each lane computes its row's statement with the same operations in the same order, so the
//! results are bitwise the same; the four rows' divisions are one vector division, where the
//! jammed code ran them one by one on the scalar divider. The operands that move with the rows
//! are read per lane (or as one vector load where they are contiguous across the rows), the
//! others are scalars; an operand that reads exactly what a statement of the loop wrote one
//! step before in the same row, or what a statement before it wrote at the same step (checked
//! with ISL on the two accesses), is that statement's vector, in a register.
//! It applies to an innermost loop of unit step whose body is nothing but copies of statements
//! (in `if`s on the rows only: a strip that the tile's border cuts runs the jammed code) where:
//! - every statement has the same copies, at rows one apart within each vector, writes one
//!   element of a non-private array and its text means the same on vectors with the rows as
//!   lanes (`scop_ir::lanes::StepStatement`; a macro that expands to its argument, PolyBench's
//!   `SCALAR_VAL`, reads as its argument);
//! - no two copies of one step touch one element, one of them writing (ISL, on the statements'
//!   accesses: seidel-2d's rows read the row before), and each row runs the statements in the
//!   order of the first copies, so that running a statement's rows together keeps every
//!   conflicting pair's order;
//! - every statement writes another element at every step, or the same one at every step
//!   without reading it (deriche's running values, `ym1[i] = y1[i][j]` in its arrays of copies:
//!   their readers take them from registers); an accumulator is the rows' lanes' above.
//!
//! Measured on adi at LARGE (standalone, one thread / two, medians of 3): rows jammed by four
//! and scalar 3.13 / 1.57 s; four rows as one vector 2.34 / 1.16 s; sixteen rows as four
//! vectors ([`crate::chains`] jams sixteen where [`steps_may_run`] foresees lanes) 1.88 / 0.79 s.

use crate::ast::{Ast, Expr, OpKind, SCALAR_LOOP_USER};
use crate::isl::{Ctx, UnionMap, UnionSet};
use crate::kernel::{accumulates_locally, sole_writer};
use crate::maps::{names, tuple};
use crate::tile_size::element_bytes;
use crate::Result;
use scop_ir::{AccessKind, ArrayId, Scop};

/// The name of the user node [`mark_row_lanes`] puts first in a loop's body: the printers run
/// the loop with its rows as lanes ([`row_groups`] says how).
pub const ROW_LANES_USER: &str = "tf_row_lanes";

/// The name of the user node [`mark_row_lanes`] puts first in a loop's body whose statements'
/// copies run as lanes step by step (see "Steps as lanes" in the module doc). Its arguments:
/// the lanes, then for each operand held in a register four numbers: its statement's group
/// (in [`step_groups`]' order), its number among the statement's operands that move with the
/// rows, the group whose written element it is, and 0 where it is that element's value from
/// the step before (carried from one step to the next), 1 where it is the value written at the
/// same step by a statement before it.
pub const ROW_STEPS_USER: &str = "tf_row_steps";

/// The bytes of one vector of rows (see the module doc).
pub const ROW_LANE_BYTES: i64 = 32;

/// The copies of one statement in a loop whose rows run as lanes: its tuple name, the copies'
/// coordinates in the order of the loop's body, the statement's iterator that is the loop's
/// counter, and the iterators in which the copies differ (bit `p` for iterator `p`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowGroup {
    pub stmt: String,
    pub copies: Vec<Vec<Expr>>,
    pub red: usize,
    pub rows: usize,
}

impl RowGroup {
    /// The row iterators: those of bit `rows`.
    pub fn row_iterators(&self) -> Vec<usize> {
        row_iterators(self.rows)
    }
}

/// The iterators whose bits `rows` sets (a [`RowGroup`]'s or a `crate::RowPart`'s `rows`).
pub fn row_iterators(rows: usize) -> Vec<usize> {
    (0..usize::BITS as usize)
        .filter(|p| rows >> p & 1 == 1)
        .collect()
}

/// The statements of a loop's `body` (over `iter`) grouped by statement, in the order of their
/// first copies, when the body is nothing but statement instances (the markers of
/// [`SCALAR_LOOP_USER`] and [`ROW_LANES_USER`] aside), each statement's copies mention `iter`
/// as one whole coordinate, the same in all of them, and differ from each other in other
/// coordinates that do not mention it; `None` otherwise.
pub fn row_groups(body: &Ast, iter: &str) -> Option<Vec<RowGroup>> {
    let mut guards = Vec::new();
    let mut items = Vec::new();
    if !users_of(body, iter, &mut guards, &mut items) || !guards.is_empty() {
        return None;
    }
    match grouped(&items, iter)? {
        (groups, 1) => Some(groups),
        _ => None,
    }
}

/// The statement copies of a loop body whose rows run as lanes step by step ([`step_groups`]):
/// the groups, the conditions of the `if`s around copies (on the rows, not on the loop), and
/// the direction of the statements' coordinate along the loop (1 for `iter`, -1 for `-iter`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepGroups {
    pub groups: Vec<RowGroup>,
    pub guards: Vec<Expr>,
    pub dir: i64,
}

/// [`row_groups`] of a body whose copies may sit in `if`s without `else` whose conditions do
/// not mention `iter` (the rows that a tile's border cuts), and whose statements' coordinate
/// along the loop may be `-iter` (a loop that ISL prints counting up over a coordinate that
/// runs down), either plus a constant (deriche's backward rows, `(-iter) + 2159`).
pub fn step_groups(body: &Ast, iter: &str) -> Option<StepGroups> {
    let mut guards = Vec::new();
    let mut items = Vec::new();
    if !users_of(body, iter, &mut guards, &mut items) {
        return None;
    }
    let (groups, dir) = grouped(&items, iter)?;
    Some(StepGroups {
        groups,
        guards,
        dir,
    })
}

/// The nodes of `ast` other than blocks and `if`s without `else` whose conditions do not mention
/// `iter` (fused sibling loops' bodies, copies that a tile's border cuts), into `out`, and the
/// conditions into `guards` (each once); false at an `if` that does not qualify.
fn users_of<'a>(ast: &'a Ast, iter: &str, guards: &mut Vec<Expr>, out: &mut Vec<&'a Ast>) -> bool {
    match ast {
        Ast::Block(items) => items.iter().all(|a| users_of(a, iter, guards, out)),
        Ast::If {
            cond,
            then,
            els: None,
        } if !cond.mentions(iter) => {
            if !guards.contains(cond) {
                guards.push(cond.clone());
            }
            users_of(then, iter, guards, out)
        }
        Ast::If { .. } => false,
        other => {
            out.push(other);
            true
        }
    }
}

/// The statement instances `items` grouped as [`row_groups`] groups them, and the direction of
/// their coordinate along `iter` (see [`StepGroups`]).
fn grouped(items: &[&Ast], iter: &str) -> Option<(Vec<RowGroup>, i64)> {
    let along = Expr::Id(iter.to_string());
    let against = Expr::Op(OpKind::Minus, vec![along.clone()]);
    let mut groups: Vec<RowGroup> = Vec::new();
    let mut dir = None;
    for item in items {
        let Ast::User { name, args } = item else {
            return None;
        };
        if name == SCALAR_LOOP_USER || name == ROW_LANES_USER || name == ROW_STEPS_USER {
            continue;
        }
        crate::scop::stmt_of_name(name)?;
        // The coordinate along the loop: `iter` or `-iter`, plus a constant (a backward loop's
        // `2159 - j` prints as `(-j) + 2159`).
        let (red, d) = args.iter().enumerate().find_map(|(k, a)| {
            match crate::kernel::base_and_offset(a)?.0 {
                Some(b) if *b == along => Some((k, 1)),
                Some(b) if *b == against => Some((k, -1)),
                _ => None,
            }
        })?;
        if dir.is_some_and(|x| x != d) {
            return None;
        }
        dir = Some(d);
        let others_mention = args
            .iter()
            .enumerate()
            .any(|(k, a)| k != red && a.mentions(iter));
        if others_mention {
            return None;
        }
        match groups.iter_mut().find(|g| g.stmt == *name) {
            Some(g) if g.red == red && g.copies[0].len() == args.len() => {
                if g.copies.contains(args) {
                    return None;
                }
                for (p, (a, b)) in g.copies[0].iter().zip(args).enumerate() {
                    if a != b {
                        g.rows |= 1 << p;
                    }
                }
                g.copies.push(args.clone());
            }
            Some(_) => return None,
            None => groups.push(RowGroup {
                stmt: name.clone(),
                copies: vec![args.clone()],
                red,
                rows: 0,
            }),
        }
    }
    let fine = !groups.is_empty() && groups.iter().all(|g| g.rows != 0 && g.rows < 1 << 31);
    fine.then_some((groups, dir?))
}

/// The loops [`mark_row_lanes`] marked: those whose accumulators run as lanes, and those whose
/// statements run as lanes step by step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Marked {
    pub rows: Vec<String>,
    pub steps: Vec<String>,
}

/// Puts [`ROW_LANES_USER`] (or [`ROW_STEPS_USER`]) first in the body of every loop of `ast`
/// whose rows can run as the lanes of vectors (see the module doc); returns the loops'
/// iterators.
pub(crate) fn mark_row_lanes(scop: &Scop, ast: &mut Ast, private: &[ArrayId]) -> Result<Marked> {
    let ctx = Ctx::shared()?;
    let mut marked = Marked::default();
    mark_in(ctx, scop, ast, private, &mut marked)?;
    Ok(marked)
}

fn mark_in(
    ctx: &Ctx,
    scop: &Scop,
    ast: &mut Ast,
    private: &[ArrayId],
    marked: &mut Marked,
) -> Result<()> {
    match ast {
        Ast::Block(items) => {
            for item in items {
                mark_in(ctx, scop, item, private, marked)?;
            }
        }
        Ast::If { then, els, .. } => {
            mark_in(ctx, scop, then, private, marked)?;
            if let Some(els) = els {
                mark_in(ctx, scop, els, private, marked)?;
            }
        }
        Ast::For {
            iter, inc, body, ..
        } => {
            let unit = *inc == Expr::Int("1".into());
            let first = match row_groups(body, iter) {
                Some(groups) => match unit {
                    true => lanes_of(ctx, scop, &groups, private, false)?.map(|lanes| {
                        marked.rows.push(iter.clone());
                        (ROW_LANES_USER, vec![lanes])
                    }),
                    false => None,
                },
                None => None,
            };
            let first = match (first, step_groups(body, iter)) {
                (Some(first), _) => Some(first),
                (None, Some(steps)) if unit => steps_of(ctx, scop, &steps, body, iter, private)?
                    .map(|numbers| {
                        marked.steps.push(iter.clone());
                        (ROW_STEPS_USER, numbers)
                    }),
                (None, Some(_)) => None,
                (None, None) => return mark_in(ctx, scop, body, private, marked),
            };
            let Some((name, numbers)) = first else {
                return Ok(());
            };
            let first = Ast::User {
                name: name.to_string(),
                args: numbers.iter().map(|n| Expr::Int(n.to_string())).collect(),
            };
            match body.as_mut() {
                Ast::Block(items) => items.insert(0, first),
                other => {
                    let old = std::mem::replace(other, Ast::Block(Vec::new()));
                    *other = Ast::Block(vec![first, old]);
                }
            }
        }
        Ast::User { .. } | Ast::Kernel(_) => {}
    }
    Ok(())
}

/// The lanes of vectors that accumulator kernel `k` (`crate::kernel`'s "Accumulators") can
/// also run its rows in: its block of rows written out as the jammed reduction loop that
/// [`mark_row_lanes`] would mark, checked as that loop is (see "Accumulators as lanes" in the
/// module doc). `None` when it does not qualify.
pub(crate) fn accumulator_lanes(
    scop: &Scop,
    k: &crate::ast::Kernel,
    private: &[ArrayId],
) -> Result<Option<i64>> {
    let [row, red] = k.loops.as_slice() else {
        return Ok(None);
    };
    let copies: Vec<Ast> = (0..k.rows)
        .map(|r| {
            let mut args = k.args.clone();
            args.iter_mut()
                .for_each(|a| crate::ast::substitute(a, &row.iter, r));
            Ast::User {
                name: k.stmt.clone(),
                args,
            }
        })
        .collect();
    let Some(groups) = row_groups(&Ast::Block(copies), &red.iter) else {
        return Ok(None);
    };
    lanes_of(Ctx::shared()?, scop, &groups, private, true)
}

/// The lanes of the vectors the statements of `groups` run in, when they qualify (see the
/// module doc): all of the same element type. With `held_apart`, the elements the statements
/// write are known to be reached by no other access of the tile while their block of rows runs
/// (an accumulator kernel's check), and a statement may read its array elsewhere too.
fn lanes_of(
    ctx: &Ctx,
    scop: &Scop,
    groups: &[RowGroup],
    private: &[ArrayId],
    held_apart: bool,
) -> Result<Option<i64>> {
    let mut all = None;
    for g in groups {
        let Some((_, write)) = sole_writer(scop, &g.stmt, private) else {
            return Ok(None);
        };
        let elem = scop.array(write.array).elem_type.as_str();
        let lanes = ROW_LANE_BYTES / (element_bytes(elem) as i64).max(1);
        if all.is_some_and(|l| l != lanes) {
            return Ok(None);
        }
        all = Some(lanes);
    }
    Ok(
        match runs_as_lanes(ctx, scop, groups, private, held_apart)? {
            true => all,
            false => None,
        },
    )
}

/// Whether the statements of `groups` qualify (see the module doc).
fn runs_as_lanes(
    ctx: &Ctx,
    scop: &Scop,
    groups: &[RowGroup],
    private: &[ArrayId],
    held_apart: bool,
) -> Result<bool> {
    let mut written = Vec::new();
    for g in groups {
        let Some((stmt, write)) = sole_writer(scop, &g.stmt, private) else {
            return Ok(false);
        };
        let elem = scop.array(write.array).elem_type.as_str();
        let lanes = ROW_LANE_BYTES / (element_bytes(elem) as i64).max(1);
        if g.copies.len() as i64 % lanes != 0 || !accumulates_locally(scop, stmt, write) {
            return Ok(false);
        }
        // The statement reads its array only through the element it writes (or, `held_apart`,
        // never an element that a block of rows holds).
        let other_relation = !held_apart
            && stmt
                .accesses
                .iter()
                .any(|a| a.array == write.array && a.relation != write.relation);
        let rows = g.row_iterators();
        let text = scop_ir::lanes::RowStatement {
            scop,
            stmt,
            red: g.red,
            rows: &rows,
            elem,
        };
        if other_relation || text.refusal().is_some() {
            return Ok(false);
        }
        // Distinct rows write distinct elements: two instances that write one element agree on
        // the row iterators.
        let dims = g.copies[0].len();
        let (x, y) = (names("x", dims), names("y", dims));
        let same_rows: Vec<String> = g
            .row_iterators()
            .iter()
            .map(|&p| format!("{} = {}", x[p], y[p]))
            .collect();
        let name = &g.stmt;
        let agree = UnionMap::read(
            ctx,
            &format!(
                "{{ {} -> {} : {} }}",
                tuple(name, &x),
                tuple(name, &y),
                same_rows.join(" and ")
            ),
        )?;
        let access = UnionMap::read(ctx, &write.relation)?;
        let same_element = access.clone().apply_range(access.reverse()?)?;
        if !same_element.is_subset(&agree)? {
            return Ok(false);
        }
        if written.contains(&write.array) {
            return Ok(false);
        }
        written.push(write.array);
    }
    // No other statement of the loop touches an array that one of them writes.
    for g in groups {
        let Some((stmt, write)) = sole_writer(scop, &g.stmt, private) else {
            return Ok(false);
        };
        let touches_other = stmt.accesses.iter().any(|a| {
            a.array != write.array && (written.contains(&a.array) || a.kind == AccessKind::Write)
        });
        if touches_other {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The numbers of the [`ROW_STEPS_USER`] marker of a loop over `iter` whose statement copies
/// `steps` (in `body`) can run as the lanes of vectors step by step (see "Steps as lanes" in
/// the module doc); `None` when they cannot.
fn steps_of(
    ctx: &Ctx,
    scop: &Scop,
    steps: &StepGroups,
    body: &Ast,
    iter: &str,
    private: &[ArrayId],
) -> Result<Option<Vec<i64>>> {
    let groups = &steps.groups;
    let first = &groups[0];
    // One row iterator, the same copies (rows) for every statement, in the same coordinates.
    let same_copies = groups
        .iter()
        .all(|g| g.copies == first.copies && g.red == first.red);
    if !same_copies || first.rows.count_ones() != 1 {
        return Ok(None);
    }
    let row = first.rows.trailing_zeros() as usize;
    let mut lanes = None;
    let mut writes = Vec::new();
    for g in groups {
        let Some((stmt, write)) = sole_writer(scop, &g.stmt, private) else {
            return Ok(None);
        };
        match step_lanes(scop, stmt, write, row) {
            Some(l) if lanes.is_none_or(|x| x == l) => lanes = Some(l),
            _ => return Ok(None),
        }
        writes.push((stmt, write));
    }
    let Some(lanes) = lanes else {
        return Ok(None);
    };
    // Each vector's copies at consecutive rows.
    let l = lanes as usize;
    let copies = &first.copies;
    if !copies.len().is_multiple_of(l) {
        return Ok(None);
    }
    for v in copies.chunks(l) {
        let consecutive = v
            .iter()
            .enumerate()
            .all(|(k, c)| difference(&v[0][row], &c[row]) == Some(k as i64));
        if !consecutive {
            return Ok(None);
        }
    }
    // Each row runs the statements in the groups' order.
    let mut items = Vec::new();
    users_of(body, iter, &mut Vec::new(), &mut items);
    let mut last = vec![0usize; copies.len()];
    for item in items {
        let Ast::User { name, args } = item else {
            continue;
        };
        let (Some(g), Some(c)) = (
            groups.iter().position(|g| g.stmt == *name),
            copies.iter().position(|c| c == args),
        ) else {
            continue;
        };
        if g < last[c] {
            return Ok(None);
        }
        last[c] = g;
    }
    // No two copies of one step touch one element, one of them writing.
    let dims = first.copies[0].len();
    let (x, y) = (names("x", dims), names("y", dims));
    let pair = |g: &str, h: &str, cond: &str| {
        UnionMap::read(
            ctx,
            &format!("{{ {} -> {} : {cond} }}", tuple(g, &x), tuple(h, &y)),
        )
    };
    let equal_but = |skip: usize| -> Vec<String> {
        (0..dims)
            .filter(|&k| k != skip)
            .map(|k| format!("{} = {}", x[k], y[k]))
            .collect()
    };
    let same_step = format!(
        "{} and ({} < {} or {} > {})",
        equal_but(row).join(" and "),
        x[row],
        y[row],
        x[row],
        y[row]
    );
    for (a, (sa, _)) in writes.iter().enumerate() {
        for (sb, _) in &writes[a..] {
            let (da, db) = (
                UnionSet::read(ctx, &sa.domain)?,
                UnionSet::read(ctx, &sb.domain)?,
            );
            for xa in &sa.accesses {
                for xb in sb.accesses.iter().filter(|xb| xb.array == xa.array) {
                    if xa.kind != AccessKind::Write && xb.kind != AccessKind::Write {
                        continue;
                    }
                    let ra = UnionMap::read(ctx, &xa.relation)?.intersect_domain(da.clone())?;
                    let rb = UnionMap::read(ctx, &xb.relation)?.intersect_domain(db.clone())?;
                    let touching = ra.apply_range(rb.reverse()?)?;
                    let across = pair(&sa_name(sa), &sa_name(sb), &same_step)?;
                    if !touching.intersect(across)?.is_empty()? {
                        return Ok(None);
                    }
                }
            }
        }
    }
    // The statements whose written element is the same at every step (deriche's running
    // values in their arrays of copies, `ym1[i] = y1[i][j]`): an element that some steps write
    // again and others not refuses the loop, and so does an accumulator (a statement that reads
    // the element it writes again), which the accumulators' lanes keep in registers
    // ([`ROW_LANES_USER`]).
    let previous = {
        let mut cond = equal_but(first.red);
        cond.push(format!(
            "{} = {} - ({})",
            y[first.red], x[first.red], steps.dir
        ));
        cond.join(" and ")
    };
    let everywhere = (0..dims)
        .map(|k| format!("{} = {}", x[k], y[k]))
        .collect::<Vec<_>>()
        .join(" and ");
    let mut invariant = Vec::new();
    for (stmt, write) in &writes {
        let name = sa_name(stmt);
        let w = UnionMap::read(ctx, &write.relation)?;
        let shifted = pair(&name, &name, &previous)?.apply_range(w.clone())?;
        let again = pair(&name, &name, &previous)?
            .intersect(w.clone().apply_range(w.clone().reverse()?)?)?;
        let same = w.is_equal(&shifted)?;
        let accumulates = stmt
            .accesses
            .iter()
            .any(|a| a.kind == AccessKind::Read && a.array == write.array);
        if (!again.is_empty()? && !same) || (same && accumulates) {
            return Ok(None);
        }
        invariant.push(same);
    }
    // The operands that read what a statement of the loop wrote, from the same row, held in
    // registers: the value written one step before (kind 0: carried from step to step), or
    // the value a statement before it wrote at the same step (kind 1).
    let mut numbers = vec![lanes];
    for (g, (stmt, _)) in writes.iter().enumerate() {
        let text = scop_ir::lanes::StepStatement {
            scop,
            stmt,
            row,
            elem: scop.array(writes[g].1.array).elem_type.as_str(),
        };
        for (n, relation) in text.operand_relations().into_iter().enumerate() {
            let Some((relation, array)) = relation else {
                continue;
            };
            let mut writers = writes
                .iter()
                .enumerate()
                .filter(|(_, (_, w))| w.array == array);
            let (Some((h, (sh, w))), None) = (writers.next(), writers.next()) else {
                continue;
            };
            let w = UnionMap::read(ctx, &w.relation)?;
            let read = UnionMap::read(ctx, &relation)?;
            let (from, to) = (sa_name(stmt), sa_name(sh));
            let one_before = pair(&from, &to, &previous)?.apply_range(w.clone())?;
            let this_step = pair(&from, &to, &everywhere)?.apply_range(w)?;
            let kind = match (read.is_equal(&one_before)?, read.is_equal(&this_step)?) {
                // An element written at every step, by a statement after this one or by this
                // one: last step's value.
                (true, _) if invariant[h] && g <= h => 0,
                (true, _) if invariant[h] => 1,
                (true, _) => 0,
                (false, true) if h < g => 1,
                _ => continue,
            };
            numbers.extend([g as i64, n as i64, h as i64, kind]);
        }
    }
    Ok(Some(numbers))
}

/// The lanes in which the statements of `schedule` (a tile's points: statement instances to
/// their dimensions) may run as vectors step by step once jammed along dimension `m` (see
/// "Steps as lanes" in the module doc): each statement writes one element, of no private
/// array, with its text fit for lanes along its iterator that dimension `m` is; all write
/// elements of one type; and no two instances that differ in dimension `m` alone touch one
/// element, one of them writing. `None` otherwise. A cheap forecast for choosing the jam
/// (`crate::chains`): [`mark_row_lanes`] checks the jammed loops themselves.
pub(crate) fn steps_may_run(
    scop: &Scop,
    schedule: &UnionMap<'_>,
    m: usize,
    private: &[ArrayId],
) -> Result<Option<i64>> {
    let ctx = schedule.ctx();
    let mut lanes = None;
    let mut all = UnionMap::empty(ctx)?;
    let mut written = UnionMap::empty(ctx)?;
    let mut dims = None;
    for map in schedule.maps()? {
        let Some(stmt) = crate::steps::statement_of(scop, &map) else {
            return Ok(None);
        };
        let name = stmt.id.to_string();
        let Some((_, write)) = sole_writer(scop, &name, private) else {
            return Ok(None);
        };
        let n_out = map.n_dims(crate::isl::Side::Out)?;
        if m >= n_out || dims.is_some_and(|d| d != n_out) {
            return Ok(None);
        }
        dims = Some(n_out);
        let (x, o) = (names("i", stmt.iterators.len()), names("o", n_out));
        let map = UnionMap::from_map(map)?;
        let mut row = None;
        for k in 0..x.len() {
            let along = UnionMap::read(
                ctx,
                &format!(
                    "{{ {} -> {} : {} = {} }}",
                    tuple(&name, &x),
                    tuple("", &o),
                    o[m],
                    x[k]
                ),
            )?;
            if map.is_subset(&along)? {
                row = Some(k);
                break;
            }
        }
        let Some(row) = row else {
            return Ok(None);
        };
        match step_lanes(scop, stmt, write, row) {
            Some(l) if lanes.is_none_or(|x| x == l) => lanes = Some(l),
            _ => return Ok(None),
        }
        for a in &stmt.accesses {
            let relation = UnionMap::read(ctx, &a.relation)?;
            let at = map.clone().reverse()?.apply_range(relation)?;
            if a.kind == AccessKind::Write {
                written = written.union(at.clone())?;
            }
            all = all.union(at)?;
        }
    }
    let Some(n) = dims else {
        return Ok(None);
    };
    let (x, y) = (names("x", n), names("y", n));
    let mut cond: Vec<String> = (0..n)
        .filter(|&k| k != m)
        .map(|k| format!("{} = {}", x[k], y[k]))
        .collect();
    cond.push(format!("({0} < {1} or {0} > {1})", x[m], y[m]));
    let across = UnionMap::read(
        ctx,
        &format!(
            "{{ {} -> {} : {} }}",
            tuple("", &x),
            tuple("", &y),
            cond.join(" and ")
        ),
    )?;
    let touching = written.apply_range(all.reverse()?)?;
    Ok(match touching.intersect(across)?.is_empty()? {
        true => lanes,
        false => None,
    })
}

/// The lanes of the vectors `stmt` (which writes `write`) runs in with iterator `row` as the
/// lanes, step by step, when its text allows it (`scop_ir::lanes::StepStatement`).
fn step_lanes(
    scop: &Scop,
    stmt: &scop_ir::Statement,
    write: &scop_ir::Access,
    row: usize,
) -> Option<i64> {
    let elem = scop.array(write.array).elem_type.as_str();
    let text = scop_ir::lanes::StepStatement {
        scop,
        stmt,
        row,
        elem,
    };
    match text.refusal() {
        None => Some(ROW_LANE_BYTES / (element_bytes(elem) as i64).max(1)),
        Some(_) => None,
    }
}

/// A statement's tuple name.
fn sa_name(stmt: &scop_ir::Statement) -> String {
    stmt.id.to_string()
}

/// `b - a` when both are the same expression plus constants (`i`, `i + 2`); `None` otherwise.
fn difference(a: &Expr, b: &Expr) -> Option<i64> {
    fn split(e: &Expr) -> Option<(&Expr, i64)> {
        match e {
            Expr::Op(OpKind::Add, args) => match args.as_slice() {
                [x, Expr::Int(c)] => Some((x, c.parse().ok()?)),
                [Expr::Int(c), x] => Some((x, c.parse().ok()?)),
                _ => Some((e, 0)),
            },
            Expr::Op(OpKind::Sub, args) => match args.as_slice() {
                [x, Expr::Int(c)] => Some((x, -c.parse::<i64>().ok()?)),
                _ => Some((e, 0)),
            },
            _ => Some((e, 0)),
        }
    }
    let ((xa, ca), (xb, cb)) = (split(a)?, split(b)?);
    (xa == xb).then_some(cb - ca)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::testing::{id, int, op, user};
    use crate::ast::OpKind;

    /// Copies of `name` at rows `i + 0 .. i + n` and loop `j`.
    fn copies(name: &str, n: i64) -> Vec<Ast> {
        (0..n)
            .map(|r| {
                let row = match r {
                    0 => id("i"),
                    _ => op(OpKind::Add, vec![id("i"), int(r)]),
                };
                user(name, vec![row, id("j")])
            })
            .collect()
    }

    fn scop_of(source: &str) -> Scop {
        let (file, _) =
            frontend::parse_source("test.c", source, &frontend::Options::default()).unwrap();
        file.scops.into_iter().next().unwrap()
    }

    #[test]
    fn a_loops_copies_group_by_statement_and_row() {
        let mut body = vec![user(SCALAR_LOOP_USER, vec![])];
        body.extend(copies("S1", 4));
        body.push(Ast::Block(copies("S0", 4)));
        let groups = row_groups(&Ast::Block(body), "j").expect("two groups");
        let names: Vec<(&str, usize, usize, usize)> = groups
            .iter()
            .map(|g| (g.stmt.as_str(), g.copies.len(), g.red, g.rows))
            .collect();
        assert_eq!(names, vec![("S1", 4, 1, 1), ("S0", 4, 1, 1)]);
        assert_eq!(groups[0].row_iterators(), vec![0]);
        // The loop's counter in another coordinate, a copy twice, or copies that do not differ
        // in any row: no groups.
        let skewed = user("S0", vec![op(OpKind::Add, vec![id("i"), id("j")]), id("j")]);
        assert_eq!(row_groups(&Ast::Block(vec![skewed]), "j"), None);
        let mut twice = copies("S0", 2);
        twice.push(twice[1].clone());
        assert_eq!(row_groups(&Ast::Block(twice), "j"), None);
        assert_eq!(row_groups(&Ast::Block(copies("S0", 1)), "j"), None);
    }

    /// A statement of the loop that reads what another one sums keeps the jammed code, even
    /// where each statement alone would run in lanes.
    #[test]
    fn sums_that_another_statement_of_the_loop_reads_stay_in_memory() {
        let scop = scop_of(
            "void f(int n, double A[n][n], double x[n], double t[n], double u[n]) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      t[i] = t[i] + A[i][j] * x[j];
      u[i] = u[i] + A[i][j] * t[j];
    }
#pragma endscop
}",
        );
        let ctx = Ctx::shared().unwrap();
        let mut body = copies("S0", 4);
        let alone = row_groups(&Ast::Block(body.clone()), "j").unwrap();
        assert_eq!(lanes_of(ctx, &scop, &alone, &[], false).unwrap(), Some(4));
        body.extend(copies("S1", 4));
        let both = row_groups(&Ast::Block(body), "j").unwrap();
        assert_eq!(lanes_of(ctx, &scop, &both, &[], false).unwrap(), None);
        let second = row_groups(&Ast::Block(copies("S1", 4)), "j").unwrap();
        assert_eq!(lanes_of(ctx, &scop, &second, &[], false).unwrap(), Some(4));
    }

    /// Copies that write one element (a sum over the rows too) or too few copies for a
    /// vector (floats take eight lanes) keep the jammed code.
    #[test]
    fn rows_that_share_an_element_or_fill_no_vector_stay_in_memory() {
        let scop = scop_of(
            "void f(int n, double A[n][n], double x[n], double s[n], float F[n][n], float y[n]) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      s[i / 2] = s[i / 2] + A[i][j] * x[j];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      y[i] = y[i] + F[i][j];
#pragma endscop
}",
        );
        let ctx = Ctx::shared().unwrap();
        let halves = row_groups(&Ast::Block(copies("S0", 4)), "j").unwrap();
        assert_eq!(lanes_of(ctx, &scop, &halves, &[], false).unwrap(), None);
        let four = row_groups(&Ast::Block(copies("S1", 4)), "j").unwrap();
        assert_eq!(lanes_of(ctx, &scop, &four, &[], false).unwrap(), None);
        let eight = row_groups(&Ast::Block(copies("S1", 8)), "j").unwrap();
        assert_eq!(lanes_of(ctx, &scop, &eight, &[], false).unwrap(), Some(8));
    }

    /// gesummv's tiles (MINI, tiles of 8): its two products' jammed rows run as lanes.
    #[test]
    fn gesummvs_jammed_rows_run_as_lanes() {
        let scop = crate::polybench_scop("gesummv");
        let deps = crate::dependences(&scop).unwrap();
        let cfg = crate::ScheduleConfig {
            tile_sizes: Some(vec![8]),
            ..crate::ScheduleConfig::default()
        };
        let (sched, _) = crate::schedule(&scop, &deps, &cfg).unwrap();
        let coords = names("t", sched.nests[0].tile_sizes.len());
        let (ast, code) =
            crate::tile_body_ast(&scop, &sched, crate::NestId::new(0), &coords, "c", &[]).unwrap();
        assert_eq!(code.row_lanes.len(), 1, "{code:?}");
        let mut marked = 0;
        ast.walk(&mut |node| {
            if let Ast::User { name, args } = node {
                if name == ROW_LANES_USER {
                    assert_eq!(args, &vec![int(4)]);
                    marked += 1;
                }
            }
        });
        assert_eq!(marked, 1);
    }
}
