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

use crate::ast::{Ast, Expr};
use crate::isl::{Ctx, UnionMap};
use crate::kernel::{accumulates_locally, sole_writer};
use crate::maps::{names, tuple};
use crate::tile_code::SCALAR_LOOP_USER;
use crate::tile_size::element_bytes;
use crate::Result;
use scop_ir::{AccessKind, ArrayId, Scop};

/// The name of the user node [`mark_row_lanes`] puts first in a loop's body: the printers run
/// the loop with its rows as lanes ([`row_groups`] says how).
pub const ROW_LANES_USER: &str = "tf_row_lanes";

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
    // The users, through blocks in blocks (fused sibling loops' bodies).
    fn users_of<'a>(ast: &'a Ast, out: &mut Vec<&'a Ast>) {
        match ast {
            Ast::Block(items) => items.iter().for_each(|a| users_of(a, out)),
            other => out.push(other),
        }
    }
    let mut items = Vec::new();
    users_of(body, &mut items);
    let mut groups: Vec<RowGroup> = Vec::new();
    for item in items {
        let Ast::User { name, args } = item else {
            return None;
        };
        if name == SCALAR_LOOP_USER || name == ROW_LANES_USER {
            continue;
        }
        crate::scop::stmt_of_name(name)?;
        let red = args.iter().position(|a| *a == Expr::Id(iter.to_string()))?;
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
    (!groups.is_empty() && groups.iter().all(|g| g.rows != 0 && g.rows < 1 << 31)).then_some(groups)
}

/// Puts [`ROW_LANES_USER`] first in the body of every loop of `ast` whose rows can run as the
/// lanes of vectors (see the module doc); returns the loops' iterators.
pub(crate) fn mark_row_lanes(
    scop: &Scop,
    ast: &mut Ast,
    private: &[ArrayId],
) -> Result<Vec<String>> {
    let ctx = Ctx::shared()?;
    let mut marked = Vec::new();
    mark_in(ctx, scop, ast, private, &mut marked)?;
    Ok(marked)
}

fn mark_in(
    ctx: &Ctx,
    scop: &Scop,
    ast: &mut Ast,
    private: &[ArrayId],
    marked: &mut Vec<String>,
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
            let Some(groups) = row_groups(body, iter) else {
                return mark_in(ctx, scop, body, private, marked);
            };
            if *inc != Expr::Int("1".into()) {
                return Ok(());
            }
            let Some(lanes) = lanes_of(ctx, scop, &groups, private)? else {
                return Ok(());
            };
            let first = Ast::User {
                name: ROW_LANES_USER.to_string(),
                args: vec![Expr::Int(lanes.to_string())],
            };
            match body.as_mut() {
                Ast::Block(items) => items.insert(0, first),
                other => {
                    let old = std::mem::replace(other, Ast::Block(Vec::new()));
                    *other = Ast::Block(vec![first, old]);
                }
            }
            marked.push(iter.clone());
        }
        Ast::User { .. } | Ast::Kernel(_) => {}
    }
    Ok(())
}

/// The lanes of the vectors the statements of `groups` run in, when they qualify (see the
/// module doc): all of the same element type.
fn lanes_of(
    ctx: &Ctx,
    scop: &Scop,
    groups: &[RowGroup],
    private: &[ArrayId],
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
    Ok(match runs_as_lanes(ctx, scop, groups, private)? {
        true => all,
        false => None,
    })
}

/// Whether the statements of `groups` qualify (see the module doc).
fn runs_as_lanes(ctx: &Ctx, scop: &Scop, groups: &[RowGroup], private: &[ArrayId]) -> Result<bool> {
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
        // The statement reads its array only through the element it writes.
        let other_relation = stmt
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
        assert_eq!(lanes_of(ctx, &scop, &alone, &[]).unwrap(), Some(4));
        body.extend(copies("S1", 4));
        let both = row_groups(&Ast::Block(body), "j").unwrap();
        assert_eq!(lanes_of(ctx, &scop, &both, &[]).unwrap(), None);
        let second = row_groups(&Ast::Block(copies("S1", 4)), "j").unwrap();
        assert_eq!(lanes_of(ctx, &scop, &second, &[]).unwrap(), Some(4));
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
        assert_eq!(lanes_of(ctx, &scop, &halves, &[]).unwrap(), None);
        let four = row_groups(&Ast::Block(copies("S1", 4)), "j").unwrap();
        assert_eq!(lanes_of(ctx, &scop, &four, &[]).unwrap(), None);
        let eight = row_groups(&Ast::Block(copies("S1", 8)), "j").unwrap();
        assert_eq!(lanes_of(ctx, &scop, &eight, &[]).unwrap(), Some(8));
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
