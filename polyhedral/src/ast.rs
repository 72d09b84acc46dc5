//! A plain-data C AST, converted from ISL's `isl_ast_node`/`isl_ast_expr` so that code generation
//! (in `taskgen`) never touches ISL. Iterators and parameters are plain names; integers are
//! decimal strings because ISL values may exceed `i64`.

/// A statement of generated control code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ast {
    /// Statements in order.
    Block(Vec<Ast>),
    /// `for (iter = init; cond; iter += inc) body`; `cond` mentions `iter`.
    For {
        iter: String,
        init: Expr,
        cond: Expr,
        inc: Expr,
        body: Box<Ast>,
    },
    /// `if (cond) then else els`.
    If {
        cond: Expr,
        then: Box<Ast>,
        els: Option<Box<Ast>>,
    },
    /// An instance of a domain element: `name` is the tuple name (a statement `S3`, a tile space
    /// `N0`, ...) and `args` its coordinates expressed in the enclosing iterators and parameters.
    User { name: String, args: Vec<Expr> },
    /// A register-tiled vector kernel (`crate::kernel`), printed under a preprocessor condition
    /// on the vector size, with its fallback otherwise.
    Kernel(Box<Kernel>),
}

/// A loop that steps by one, borrowed from its [`Ast::For`] ([`Ast::unit_loop`]).
pub(crate) struct UnitLoop<'a> {
    pub iter: &'a String,
    pub init: &'a Expr,
    pub cond: &'a Expr,
    pub body: &'a Ast,
}

/// One loop of a [`Kernel`]: `for (iter = init; cond; iter += step)`, the step the kernel's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelLoop {
    pub iter: String,
    pub init: Expr,
    pub cond: Expr,
}

/// A register-tiled kernel over one statement (see `crate::kernel`). The row loop steps by
/// `rows` (a vector kernel's rows are per vector size: [`KernelWidth`]); the reduction loop
/// steps by one and runs innermost.
///
/// With `vector`, the loops are rows, lanes and the reduction: the lane loop steps by
/// `vectors` vectors of `TF_VBYTES` bytes, and the body is `rows × vectors` instances of `stmt`
/// (`rows` and `vectors` the width's own, [`VectorLanes::widths`])
/// at `args` with the row iterator plus `0 .. rows` and the lane iterator plus `0 .. vectors`
/// vectors, each printed with the occurrences along its iterator `lane` as vectors
/// ([`kernel_user`] with [`KernelPart::Lanes`]); it is printed under a preprocessor condition on
/// the vector size, with `fallback` otherwise.
///
/// Without, the loops are rows and the reduction: before the reduction loop each row's written
/// element is loaded into an accumulator ([`KernelPart::Load`]), the body is `rows` instances
/// with that element replaced by the accumulator ([`KernelPart::Accumulate`]), and after it the
/// accumulators are stored ([`KernelPart::Store`]) and the rows' `tail` runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Outermost first: rows, lanes (with `vector`) and the reduction.
    pub loops: Vec<KernelLoop>,
    /// Rows one iteration runs: the accumulator kernel's, or a vector kernel's at its widest
    /// vector size (each size's: [`VectorLanes::widths`]).
    pub rows: i64,
    /// The statement's tuple name and its coordinates in the loops' iterators.
    pub stmt: String,
    pub args: Vec<Expr>,
    pub vector: Option<VectorLanes>,
    /// An accumulator kernel (no `vector`) whose rows also run as the lanes of vectors of this
    /// many elements (`crate::rows`: the same statement copies, checked as a jammed loop's):
    /// printed that way where the C compiler has vectors, as accumulators otherwise.
    pub row_lanes: Option<i64>,
    /// An update along the reduction loop that runs in the same loop as the lanes, over the
    /// same rows (`crate::apart`'s "One pass": bicg's and mvt's products by rows).
    pub fused: Option<Box<FusedUpdate>>,
    /// The code of the loops the kernel replaces, for vector sizes it was not checked for.
    pub fallback: Ast,
    /// An accumulator kernel's other statements of each row, after its reduction loop: one copy
    /// per row of the block (the row iterator at `row + r`), run in row order once the
    /// accumulators are stored (`crate::kernel`'s "Accumulators with a tail"); an empty block
    /// where the rows hold nothing but the reduction.
    pub tail: Ast,
    /// An accumulator kernel whose row loop's trip count need not be a multiple of `rows`: the
    /// blocks of `rows` rows run while a whole one fits, then the rows left one at a time
    /// (`crate::kernel`'s "Rows that end anywhere").
    pub ragged: bool,
}

/// A statement that an accumulator kernel whose rows run as lanes ([`Kernel::row_lanes`]) runs
/// in its lanes loop: at each block of steps, its copies at the block's rows in order, each on
/// the step's columns as one vector along the reduction loop (mvt's `x2[j] = x2[j] + A[i][j] *
/// y2[i]` beside the sums `x1[i] = x1[i] + A[i][j] * y1[j]`); one copy a step where a step is
/// left. Where the C compiler has no vectors, `plain` runs after the accumulators.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusedUpdate {
    pub stmt: String,
    /// Its coordinates in the kernel's row and reduction iterators.
    pub args: Vec<Expr>,
    /// The statement's iterator along the reduction loop.
    pub lane: usize,
    /// The update's own code over the kernel's rows.
    pub plain: Ast,
}

/// The vector part of a [`Kernel`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VectorLanes {
    /// The statement's iterator whose occurrences are vectors.
    pub lane: usize,
    /// Bytes of one element.
    pub elem_bytes: i64,
    /// The vector sizes the kernel was checked for, narrowest first, each with its register
    /// block; other sizes run the fallback.
    pub widths: Vec<KernelWidth>,
    /// Read-only occurrences along the lanes and the reduction (`A[j][k]` or `B[k][j]` for lanes
    /// `j`: `scop_ir::lanes::packed_refusal`), copied before the kernel's loops into aligned
    /// buffers with the lanes contiguous; `None` when there are none.
    pub packs: Option<Packs>,
    /// With `packs`: the statement's right-hand side starts with a product that does not vary
    /// along the lanes (`alpha * A[i][k]`: `scop_ir::lanes::has_scaled_prefix`), computed for
    /// each row and reduction step into [`SCALED_BUFFER`] before the lane loop, and read from
    /// there by the kernel's copies.
    pub scaled: bool,
}

/// A vector size (`TF_VBYTES`) a vector kernel runs at, and its register block there: `rows`
/// rows by `vectors` vectors of the lanes per iteration (`crate::kernel::shapes_for`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelWidth {
    pub bytes: i64,
    pub rows: i64,
    pub vectors: i64,
    /// The lane loop's trip count is not a multiple of `vectors` vectors: the lanes run as
    /// whole blocks of `vectors` vectors, then single vectors, then single elements (the
    /// statement as it is), each run with the reduction loop inside it.
    pub tail: bool,
    /// The rows of the last block where `rows` does not divide the row loop's trip count (0
    /// where it does): the blocks of `rows` rows run while a whole one fits, then one block of
    /// `rest` rows (`crate::kernel`'s "Six rows and the rest").
    pub rest: i64,
}

/// The buffer of a kernel's scaled products: `[reduction - start][row]` (see
/// [`VectorLanes::scaled`]).
pub const SCALED_BUFFER: &str = "tf_scaled";

/// The name of packed buffer `{n}` (see [`Packs`]).
pub const PACK_BUFFER: &str = "tf_pack{n}";
/// The constant holding the reduction loop's first iteration, where the buffers start.
pub const PACK_RED_START: &str = "tf_pack_r0";
/// The constant holding the lane loop's first iteration.
pub const PACK_LANE_START: &str = "tf_pack_q0";

/// The packed occurrences of a vector kernel (`scop_ir::lanes::packed_refusal`): `count`
/// buffers `tf_pack<n>[depth][lanes]`, filled for the reduction loop's and the lane loop's
/// ranges (the loops' bounds, which the row loop does not move), read as vectors at
/// `[reduction - start][lane - start]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packs {
    pub count: usize,
    /// The statement's reduction iterator.
    pub red: usize,
    /// The lane loop's trip count.
    pub lanes: i64,
    /// The most iterations of the reduction loop.
    pub depth: i64,
    /// Whether the array the statement writes is packed too: where the kernel runs, no element
    /// that the statement reads of it, other than the one it writes, is written
    /// (`scop_ir::lanes::packed_refusal`).
    pub frozen: bool,
    /// For each buffer, whether its occurrence reads the lanes a row apart (`A[j][k]` for lanes
    /// `j`: `scop_ir::lanes::packed_across_rows`): its fill runs a line of lanes at a time
    /// (`crate::kernel`'s "Columns packed a line at a time").
    pub across_rows: Vec<bool>,
}

/// How a user node of a [`Kernel`] prints its statement (the number: the row's accumulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelPart {
    /// The statement with the occurrences along its iterator as vectors.
    Lanes(usize),
    /// The same with its packed occurrences ([`Packs`]) read from their buffers: the lane and
    /// the reduction iterators, [`Packs::frozen`], and the vector of the block (`Some(c)`) whose
    /// packed occurrences are read from the registers [`KernelPart::PackVector`] loaded, or
    /// `None` for reads of the buffers.
    PackedLanes(usize, usize, bool, Option<usize>),
    /// `<vector type> tf_pv<n>_<c> = <vector of buffer n>; TF_PIN(tf_pv<n>_<c>);`: packed
    /// occurrence `n`'s vector `c` at this reduction step, loaded once for all the rows of the
    /// block and kept in a register (see "Packed vectors in registers" in `crate::kernel`): `n`,
    /// the lane and the reduction iterators, `c`.
    PackVector(usize, usize, usize, usize),
    /// `tf_pack<n>[..][..] = <packed occurrence n>;`: `n`, the lane and the reduction iterators,
    /// and [`Packs::frozen`].
    PackFill(usize, usize, usize, bool),
    /// [`KernelPart::PackedLanes`] of row `row` of the kernel, with the scaled product read from
    /// its buffer ([`VectorLanes::scaled`]): the lane and reduction iterators, the row,
    /// [`Packs::frozen`] and the vector whose packed occurrences are in registers, as for
    /// [`KernelPart::PackedLanes`].
    ScaledLanes(usize, usize, usize, bool, Option<usize>),
    /// `tf_scaled[..][row] = <scaled product>;`: the lane and reduction iterators, the row, and
    /// [`Packs::frozen`].
    ScaleFill(usize, usize, usize, bool),
    /// `T tf_acc<r> = <written element>;`
    Load(usize),
    /// The statement with its written element replaced by `tf_acc<r>`.
    Accumulate(usize),
    /// `<written element> = tf_acc<r>;`
    Store(usize),
    /// `T tf_col[rows] __attribute__((aligned(64)));`: the buffer of the column that the
    /// statement reads along its iterator `red` (`crate::column`), `T` its array's element
    /// type: `red`, `rows`.
    ColumnDecl(usize, usize),
    /// `tf_col[<row>] = <column element>;` for the column along `red`.
    ColumnFill(usize),
    /// The statement with its written element replaced by `tf_acc<r>` and the column along
    /// `red` read from `tf_col`: `red`, `r`.
    ColumnAccumulate(usize, usize),
    /// `<written element> = tf_acc<r>; tf_col[<its row>] = tf_acc<r>;`
    ColumnStore(usize),
    /// The buffer of the `n`-th occurrence that the statement reads across its iterator `q`
    /// (`crate::gather`), numbered `base + n` in the tile: `T tf_gpack<m>[rows][cols];` and the
    /// constants `tf_gp<m>_0`, `tf_gp<m>_1` set to the user node's two arguments (the box's
    /// first element): `q`, `n`, `base`, `rows`, `cols`.
    GatherDecl(usize, usize, usize, usize, usize),
    /// `tf_gpack<m>[b - tf_gp<m>_1][a - tf_gp<m>_0] = X[a][b];`, `a` and `b` the user node's
    /// arguments: `q`, `n`, `base`.
    GatherFill(usize, usize, usize),
    /// The statement with its occurrences across `q` read from their buffers: `q`, `base`.
    Gathered(usize, usize),
    /// The statement with the occurrences along its iterator as vectors of the row lanes'
    /// width (`TF_ROWD`, `TF_ROWF`: an update that an accumulator kernel's lanes loop runs,
    /// [`FusedUpdate`]).
    RowLanes(usize),
    /// A part of a loop whose rows run as the lanes of vectors (`crate::rows`).
    Row(RowPart),
    /// A part of a loop whose statements' rows run as the lanes of vectors step by step
    /// (`crate::rows`, "Steps as lanes").
    Step(StepPart),
}

/// A part of a loop whose statements' copies run as the lanes of vectors step by step
/// (`crate::rows`): what it prints, for vector `vector` of the loop (the statements' vectors of
/// rows, numbered in order), of a statement whose row iterator is `row`; bit `n` of `carried`
/// set where the statement's `n`-th operand that moves with the rows is held in a register
/// from one step to the next instead of read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepPart {
    pub what: StepWhat,
    pub vector: usize,
    pub row: usize,
    pub carried: usize,
}

/// What a [`StepPart`] prints (`tf_sw<v>` the vector of the elements that vector `v` writes,
/// `tf_so<v>_<n>` the vector of its `n`-th operand that moves with the rows; one lane's copy
/// prints its lane).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepWhat {
    /// `T tf_sw<v> = {0}, tf_so<v>_<n> = {0}, ...;` (`T` the 32-byte vector type).
    Decl,
    /// `tf_so<v>_<n>[lane] = <operand n>;` for the carried operands, before the loop.
    Carry(usize),
    /// `tf_so<v>_<n>[lane] = <operand n>;` for the others (and the written element for a
    /// compound assignment), in a step; a contiguous operand is one vector load, in lane 0.
    Gather(usize),
    /// The statement on vectors: the written element as `tf_sw<v>`, operand `n` as `tf_so<v>_<n>`.
    Step,
    /// `<written element> = tf_sw<v>[lane];` (one vector store in lane 0 where it is contiguous).
    Scatter(usize),
}

impl StepWhat {
    const TAGS: [&'static str; 5] = ["decl", "carry", "gather", "step", "scatter"];

    fn tag_and_number(self) -> (usize, usize) {
        match self {
            StepWhat::Decl => (0, 0),
            StepWhat::Carry(n) => (1, n),
            StepWhat::Gather(n) => (2, n),
            StepWhat::Step => (3, 0),
            StepWhat::Scatter(n) => (4, n),
        }
    }

    fn of(tag: &str, n: usize) -> Option<StepWhat> {
        Some(match Self::TAGS.iter().position(|t| *t == tag)? {
            0 => StepWhat::Decl,
            1 => StepWhat::Carry(n),
            2 => StepWhat::Gather(n),
            3 => StepWhat::Step,
            _ => StepWhat::Scatter(n),
        })
    }
}

/// The name of vector `v`'s written elements in a loop whose statements run as lanes step by
/// step (see [`StepWhat`]).
pub fn step_written(v: usize) -> String {
    format!("tf_sw{v}")
}

/// The name of vector `v`'s `n`-th operand that moves with the rows (see [`StepWhat`]).
pub fn step_operand(v: usize, n: usize) -> String {
    format!("tf_so{v}_{n}")
}

/// A part of a loop whose rows run as the lanes of vectors (`crate::rows`): what it prints,
/// for vector `vector` of the loop (the statements' vectors of rows, numbered in order), of a
/// statement whose loop iterator is `red` and whose row iterators are the bits of `rows`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowPart {
    pub what: RowWhat,
    pub vector: usize,
    pub red: usize,
    pub rows: usize,
}

/// What a [`RowPart`] prints (`tf_acc<v>` the accumulator of vector `v`, `tf_rows<v>_<n>` the
/// vectors of its `n`-th operand that moves with the rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowWhat {
    /// `T tf_acc<v>; T tf_rows<v>_<n>[lanes]; ...` (`T` the 32-byte vector type).
    Decl,
    /// `tf_acc<v>[lane] = <written element>;`
    Acc(usize),
    /// `tf_rows<v>_<n>[lane] = <operand n as a vector>;` for each operand.
    Load(usize),
    /// The operands' vectors transposed: `tf_rows<v>_<n>[k]` holds the rows at step `k`.
    Transpose,
    /// The statement on vectors at step `k` of a block: the written element read from
    /// `tf_acc<v>`, operand `n` from `tf_rows<v>_<n>[k]`.
    Step(usize),
    /// The statement on one lane: the written element as `tf_acc<v>[lane]`.
    Scalar(usize),
    /// `<written element> = tf_acc<v>[lane];`
    Store(usize),
}

impl RowWhat {
    const TAGS: [&'static str; 7] = ["decl", "acc", "load", "tr", "step", "scal", "store"];

    fn tag_and_number(self) -> (usize, usize) {
        match self {
            RowWhat::Decl => (0, 0),
            RowWhat::Acc(n) => (1, n),
            RowWhat::Load(n) => (2, n),
            RowWhat::Transpose => (3, 0),
            RowWhat::Step(n) => (4, n),
            RowWhat::Scalar(n) => (5, n),
            RowWhat::Store(n) => (6, n),
        }
    }

    fn of(tag: &str, n: usize) -> Option<RowWhat> {
        Some(match Self::TAGS.iter().position(|t| *t == tag)? {
            0 => RowWhat::Decl,
            1 => RowWhat::Acc(n),
            2 => RowWhat::Load(n),
            3 => RowWhat::Transpose,
            4 => RowWhat::Step(n),
            5 => RowWhat::Scalar(n),
            _ => RowWhat::Store(n),
        })
    }
}

/// The name of the user node `crate::tile_code`'s reduction loops get first in their body: the
/// printers write `TF_SCALAR_LOOP;` for it.
pub const SCALAR_LOOP_USER: &str = "tf_scalar_loop";

/// The name of the buffer of a column (`crate::column`).
pub const COLUMN_BUFFER: &str = "tf_col";

/// The tags of [`kernel_user`] names.
type PartTag = (&'static str, fn(usize) -> KernelPart);

const PARTS: [PartTag; 7] = [
    ("@lanes", KernelPart::Lanes),
    ("@rlanes", KernelPart::RowLanes),
    ("@load", KernelPart::Load),
    ("@acc", KernelPart::Accumulate),
    ("@store", KernelPart::Store),
    ("@cfill", KernelPart::ColumnFill),
    ("@cstore", KernelPart::ColumnStore),
];

/// The name of a user node of `stmt` printed as `part` of a kernel.
pub fn kernel_user(stmt: &str, part: KernelPart) -> String {
    let (tag, n) = match part {
        KernelPart::Lanes(n) => ("@lanes", n),
        KernelPart::RowLanes(n) => ("@rlanes", n),
        KernelPart::Load(n) => ("@load", n),
        KernelPart::Accumulate(n) => ("@acc", n),
        KernelPart::Store(n) => ("@store", n),
        KernelPart::ColumnDecl(red, rows) => return format!("{stmt}@cdecl{red}.{rows}"),
        KernelPart::ColumnFill(n) => ("@cfill", n),
        KernelPart::ColumnStore(n) => ("@cstore", n),
        KernelPart::ColumnAccumulate(red, r) => return format!("{stmt}@ccol{red}.{r}"),
        KernelPart::GatherDecl(q, n, base, rows, cols) => {
            return format!("{stmt}@gdecl{q}.{n}.{base}.{rows}.{cols}")
        }
        KernelPart::GatherFill(q, n, base) => return format!("{stmt}@gfill{q}.{n}.{base}"),
        KernelPart::Gathered(q, base) => return format!("{stmt}@gath{q}.{base}"),
        KernelPart::PackedLanes(q, r, f, c) => {
            return format!("{stmt}@plane{q}.{r}.{}.{}", f as u8, pinned(c))
        }
        KernelPart::PackVector(n, q, r, c) => return format!("{stmt}@pvec{n}.{q}.{r}.{c}"),
        KernelPart::PackFill(n, q, r, f) => return format!("{stmt}@pfill{n}.{q}.{r}.{}", f as u8),
        KernelPart::ScaledLanes(q, r, row, f, c) => {
            return format!("{stmt}@slane{q}.{r}.{row}.{}.{}", f as u8, pinned(c))
        }
        KernelPart::ScaleFill(q, r, row, f) => {
            return format!("{stmt}@sfill{q}.{r}.{row}.{}", f as u8)
        }
        KernelPart::Step(p) => {
            let (tag, n) = p.what.tag_and_number();
            return format!(
                "{stmt}@step.{}.{n}.{}.{}.{}",
                StepWhat::TAGS[tag],
                p.vector,
                p.row,
                p.carried
            );
        }
        KernelPart::Row(p) => {
            let (tag, n) = p.what.tag_and_number();
            return format!(
                "{stmt}@row.{}.{n}.{}.{}.{}",
                RowWhat::TAGS[tag],
                p.vector,
                p.red,
                p.rows
            );
        }
    };
    format!("{stmt}{tag}{n}")
}

/// A vector in registers in a [`kernel_user`] name: `c + 1`, or 0 for none.
fn pinned(c: Option<usize>) -> usize {
    c.map_or(0, |c| c + 1)
}

/// The vector a [`pinned`] number stands for.
fn unpinned(n: usize) -> Option<usize> {
    n.checked_sub(1)
}

/// A user node's statement name, and the kernel part it prints ([`kernel_user`]), if any.
pub fn split_kernel_user(name: &str) -> (&str, Option<KernelPart>) {
    let numbers =
        |text: &str| -> Option<Vec<usize>> { text.split('.').map(|n| n.parse().ok()).collect() };
    if let Some((stmt, rest)) = name.split_once("@row.") {
        if let Some((tag, rest)) = rest.split_once('.') {
            if let Some([n, vector, red, rows]) = numbers(rest).as_deref() {
                if let Some(what) = RowWhat::of(tag, *n) {
                    let (vector, red, rows) = (*vector, *red, *rows);
                    return (
                        stmt,
                        Some(KernelPart::Row(RowPart {
                            what,
                            vector,
                            red,
                            rows,
                        })),
                    );
                }
            }
        }
    }
    if let Some((stmt, rest)) = name.split_once("@step.") {
        if let Some((tag, rest)) = rest.split_once('.') {
            if let Some([n, vector, row, carried]) = numbers(rest).as_deref() {
                if let Some(what) = StepWhat::of(tag, *n) {
                    let part = StepPart {
                        what,
                        vector: *vector,
                        row: *row,
                        carried: *carried,
                    };
                    return (stmt, Some(KernelPart::Step(part)));
                }
            }
        }
    }
    if let Some((stmt, rest)) = name.split_once("@plane") {
        if let Some([q, r, f @ (0 | 1), c]) = numbers(rest).as_deref() {
            return (
                stmt,
                Some(KernelPart::PackedLanes(*q, *r, *f == 1, unpinned(*c))),
            );
        }
    }
    if let Some((stmt, rest)) = name.split_once("@pvec") {
        if let Some([n, q, r, c]) = numbers(rest).as_deref() {
            return (stmt, Some(KernelPart::PackVector(*n, *q, *r, *c)));
        }
    }
    if let Some((stmt, rest)) = name.split_once("@slane") {
        if let Some([q, r, row, f @ (0 | 1), c]) = numbers(rest).as_deref() {
            return (
                stmt,
                Some(KernelPart::ScaledLanes(*q, *r, *row, *f == 1, unpinned(*c))),
            );
        }
    }
    if let Some((stmt, rest)) = name.split_once("@gdecl") {
        if let Some([q, n, base, rows, cols]) = numbers(rest).as_deref() {
            return (
                stmt,
                Some(KernelPart::GatherDecl(*q, *n, *base, *rows, *cols)),
            );
        }
    }
    if let Some((stmt, rest)) = name.split_once("@gfill") {
        if let Some([q, n, base]) = numbers(rest).as_deref() {
            return (stmt, Some(KernelPart::GatherFill(*q, *n, *base)));
        }
    }
    if let Some((stmt, rest)) = name.split_once("@gath") {
        if let Some([q, base]) = numbers(rest).as_deref() {
            return (stmt, Some(KernelPart::Gathered(*q, *base)));
        }
    }
    if let Some((stmt, rest)) = name.split_once("@cdecl") {
        if let Some([red, rows]) = numbers(rest).as_deref() {
            return (stmt, Some(KernelPart::ColumnDecl(*red, *rows)));
        }
    }
    if let Some((stmt, rest)) = name.split_once("@ccol") {
        if let Some([red, r]) = numbers(rest).as_deref() {
            return (stmt, Some(KernelPart::ColumnAccumulate(*red, *r)));
        }
    }
    if let Some((stmt, rest)) = name.split_once("@sfill") {
        if let Some([q, r, row, f @ (0 | 1)]) = numbers(rest).as_deref() {
            return (stmt, Some(KernelPart::ScaleFill(*q, *r, *row, *f == 1)));
        }
    }
    if let Some((stmt, rest)) = name.split_once("@pfill") {
        if let Some([n, q, r, f @ (0 | 1)]) = numbers(rest).as_deref() {
            return (stmt, Some(KernelPart::PackFill(*n, *q, *r, *f == 1)));
        }
    }
    for (tag, part) in PARTS {
        if let Some((stmt, n)) = name.split_once(tag) {
            if let Ok(n) = n.parse() {
                return (stmt, Some(part(n)));
            }
        }
    }
    (name, None)
}

/// Replaces `iter` by `iter + by` in `e`.
pub(crate) fn substitute(e: &mut Expr, iter: &str, by: i64) {
    match e {
        Expr::Id(name) if name == iter => {
            *e = Expr::Op(
                OpKind::Add,
                vec![Expr::Id(iter.to_string()), Expr::Int(by.to_string())],
            );
        }
        Expr::Op(_, args) => args.iter_mut().for_each(|a| substitute(a, iter, by)),
        _ => {}
    }
}

/// Replaces `iter` by `iter + by` everywhere in `ast` ([`Ast::exprs_mut`]).
pub(crate) fn shift(ast: &mut Ast, iter: &str, by: i64) {
    ast.exprs_mut(&mut |e| substitute(e, iter, by));
}

impl Expr {
    /// Whether the expression uses the name `id`.
    pub fn mentions(&self, id: &str) -> bool {
        match self {
            Expr::Int(_) => false,
            Expr::Id(name) => name == id,
            Expr::Op(_, args) => args.iter().any(|a| a.mentions(id)),
        }
    }
}

impl Ast {
    /// The node inside blocks of one item (the node itself when it is not a block); `None` for
    /// a block of none or several.
    pub fn sole(&self) -> Option<&Ast> {
        match self {
            Ast::Block(items) => match items.as_slice() {
                [one] => one.sole(),
                _ => None,
            },
            other => Some(other),
        }
    }

    /// The loop `self` is (inside blocks of one item) when it steps by one.
    pub(crate) fn unit_loop(&self) -> Option<UnitLoop<'_>> {
        match self.sole()? {
            Ast::For {
                iter,
                init,
                cond,
                inc,
                body,
            } if *inc == Expr::Int("1".into()) => Some(UnitLoop {
                iter,
                init,
                cond,
                body,
            }),
            _ => None,
        }
    }

    /// [`Ast::sole`], mutable.
    pub fn sole_mut(&mut self) -> Option<&mut Ast> {
        match self {
            Ast::Block(items) => match items.as_mut_slice() {
                [one] => one.sole_mut(),
                _ => None,
            },
            other => Some(other),
        }
    }

    /// Calls `f` on every expression the printed code holds: loop bounds, conditions and
    /// statement arguments, a kernel's fallback and tail too (its own loops and arguments are
    /// printed from its fields; kernels are found in code no rewrite has touched yet).
    pub(crate) fn exprs_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match self {
            Ast::Block(items) => items.iter_mut().for_each(|item| item.exprs_mut(f)),
            Ast::For {
                init,
                cond,
                inc,
                body,
                ..
            } => {
                for e in [init, cond, inc] {
                    f(e);
                }
                body.exprs_mut(f);
            }
            Ast::If { cond, then, els } => {
                f(cond);
                then.exprs_mut(f);
                if let Some(e) = els {
                    e.exprs_mut(f);
                }
            }
            Ast::User { args, .. } => args.iter_mut().for_each(f),
            Ast::Kernel(k) => {
                k.fallback.exprs_mut(f);
                k.tail.exprs_mut(f);
            }
        }
    }

    /// Calls `f` on every node of the tree, parents before their children, in order.
    pub fn walk(&self, f: &mut dyn FnMut(&Ast)) {
        f(self);
        match self {
            Ast::Block(items) => items.iter().for_each(|i| i.walk(f)),
            Ast::For { body, .. } => body.walk(f),
            Ast::If { then, els, .. } => {
                then.walk(f);
                if let Some(e) = els {
                    e.walk(f);
                }
            }
            Ast::User { .. } => {}
            Ast::Kernel(k) => {
                k.fallback.walk(f);
                k.tail.walk(f);
            }
        }
    }
}

/// An integer expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A decimal integer literal, possibly negative.
    Int(String),
    /// An iterator or parameter name.
    Id(String),
    /// An operation; the arity follows ISL (`Minus` unary, `Cond`/`Select` ternary, `Min`/`Max`
    /// n-ary, the rest binary).
    Op(OpKind, Vec<Expr>),
}

/// Operations of [`Expr::Op`], with ISL's semantics (see `isl_ast_expr_op_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    And,
    AndThen,
    Or,
    OrElse,
    Max,
    Min,
    Minus,
    Add,
    Sub,
    Mul,
    /// Exact division (the remainder is known to be zero).
    Div,
    /// Floor division (rounds towards negative infinity).
    FdivQ,
    /// Division whose dividend is known to be non-negative (C `/` is correct).
    PdivQ,
    /// Remainder whose dividend is known to be non-negative (C `%` is correct).
    PdivR,
    /// Remainder only compared against zero (C `%` is correct for that).
    ZdivR,
    /// `a ? b : c` where only the chosen branch is evaluated.
    Cond,
    /// `a ? b : c` where both branches may be evaluated.
    Select,
    Eq,
    Le,
    Lt,
    Ge,
    Gt,
}

/// The statements of `items` in order, nested blocks opened.
pub(crate) fn flatten(items: Vec<Ast>) -> Vec<Ast> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Ast::Block(inner) => out.extend(flatten(inner)),
            other => out.push(other),
        }
    }
    out
}

/// Builders of small ASTs and an interpreter that lists what one runs, for the tests of the
/// transformations on this AST (`tile_code`'s jam, `unroll`).
#[cfg(test)]
pub(crate) mod testing {
    use super::{Ast, Expr, OpKind};

    pub(crate) fn id(name: &str) -> Expr {
        Expr::Id(name.to_string())
    }
    pub(crate) fn int(v: i64) -> Expr {
        Expr::Int(v.to_string())
    }
    pub(crate) fn op(kind: OpKind, args: Vec<Expr>) -> Expr {
        Expr::Op(kind, args)
    }
    pub(crate) fn user(name: &str, args: Vec<Expr>) -> Ast {
        Ast::User {
            name: name.to_string(),
            args,
        }
    }

    /// The value of `e` with the names bound in `env` (the innermost binding of a name wins).
    pub(crate) fn eval(e: &Expr, env: &[(String, i64)]) -> i64 {
        match e {
            Expr::Int(v) => v.parse().expect("an integer literal"),
            Expr::Id(n) => {
                env.iter()
                    .rev()
                    .find(|(m, _)| m == n)
                    .unwrap_or_else(|| panic!("unbound {n}"))
                    .1
            }
            Expr::Op(op, a) => {
                let v: Vec<i64> = a.iter().map(|x| eval(x, env)).collect();
                match op {
                    OpKind::Add => v[0] + v[1],
                    OpKind::Sub => v[0] - v[1],
                    OpKind::Mul => v[0] * v[1],
                    OpKind::Minus => -v[0],
                    OpKind::Min => *v.iter().min().expect("an operand"),
                    OpKind::Max => *v.iter().max().expect("an operand"),
                    OpKind::Le => (v[0] <= v[1]) as i64,
                    OpKind::Lt => (v[0] < v[1]) as i64,
                    OpKind::Ge => (v[0] >= v[1]) as i64,
                    OpKind::Gt => (v[0] > v[1]) as i64,
                    OpKind::Eq => (v[0] == v[1]) as i64,
                    OpKind::And | OpKind::AndThen => v.iter().all(|&x| x != 0) as i64,
                    OpKind::Or | OpKind::OrElse => v.iter().any(|&x| x != 0) as i64,
                    other => panic!("not evaluated here: {other:?}"),
                }
            }
        }
    }

    /// Every statement instance `ast` runs with the names bound in `env`, arguments evaluated,
    /// in execution order.
    pub(crate) fn instances(
        ast: &Ast,
        env: &mut Vec<(String, i64)>,
        out: &mut Vec<(String, Vec<i64>)>,
    ) {
        match ast {
            Ast::Block(items) => items.iter().for_each(|i| instances(i, env, out)),
            Ast::User { name, args } => {
                out.push((name.clone(), args.iter().map(|a| eval(a, env)).collect()))
            }
            Ast::For {
                iter,
                init,
                cond,
                inc,
                body,
            } => {
                env.push((iter.clone(), eval(init, env)));
                while eval(cond, env) != 0 {
                    instances(body, env, out);
                    let step = eval(inc, env);
                    if let Some(last) = env.last_mut() {
                        last.1 += step;
                    }
                }
                env.pop();
            }
            Ast::If { cond, then, els } => {
                if eval(cond, env) != 0 {
                    instances(then, env, out);
                } else if let Some(els) = els {
                    instances(els, env, out);
                }
            }
            Ast::Kernel(_) => panic!("no kernels here"),
        }
    }
}
