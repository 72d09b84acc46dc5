//! The static control part (SCoP) as plain data: what the frontend hands to every later stage.
//!
//! Everything polyhedral is a string in ISL's textual syntax, so that later stages (and tests)
//! can build a `Scop` by hand and no ISL or libclang handle leaves the crate that owns it.
//!
//! Naming conventions inside the ISL strings:
//! - statement instances live in the space `S<k>[i0, i1, ...]`, where `k` is the `StmtId` and the
//!   dimension names are the statement's C iterator names;
//! - arrays live in the space named by [`Array::isl_name`] (the C name unless it would clash with a
//!   statement name or an ISL keyword); scalars are rank-0 arrays (`alpha[]`);
//! - parameters use their C names, which the frontend guarantees are valid ISL identifiers.
//!
//! This crate holds the IR alone, with its one text form ([`scop_to_string`], for `--emit scop`
//! and the golden tests) and the reading of a statement's text as vector code ([`lanes`], for the
//! tile code's kernels), so that the polyhedral and task stages depend on it and not on the
//! frontend, which links libclang. The frontend re-exports it as `frontend::ir`.

pub mod lanes;
mod print;

pub use print::scop_to_string;

use std::fmt;

/// A byte range `[start, end)` in the source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// A 1-based line and column, for diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Loc {
    pub line: u32,
    pub col: u32,
}

/// Index of a statement in [`Scop::statements`]; prints as `S0`, `S1`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StmtId(pub u32);

/// Index of an array (or scalar) in [`Scop::arrays`]; prints as `A0`, `A1`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ArrayId(pub u32);

impl fmt::Display for StmtId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S{}", self.0)
    }
}

impl fmt::Display for ArrayId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "A{}", self.0)
    }
}

impl StmtId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl ArrayId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One source file and the SCoPs found in it.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path as given by the user (used in diagnostics).
    pub path: String,
    /// The file's bytes, exactly as read. Code outside SCoPs is copied from here byte for byte.
    pub text: String,
    /// SCoPs in source order; their regions do not overlap.
    pub scops: Vec<Scop>,
}

/// Where a variable used in a SCoP is declared; decides how generated task code reaches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Declared at file scope before the SCoP's function: task code names it directly.
    File,
    /// A parameter or local variable of the enclosing function: task code reaches it through a
    /// captured pointer (arrays, written scalars) or value (read-only scalars).
    Local,
    /// A scalar declared inside the SCoP (in a loop body or branch): the generated code declares
    /// it at the head of the code that replaces the SCoP, then reaches it as a local.
    Block,
}

impl Storage {
    /// Its name in the printed forms of a SCoP.
    pub fn name(self) -> &'static str {
        match self {
            Storage::File => "file",
            Storage::Local => "local",
            Storage::Block => "block",
        }
    }
}

/// A scalar that is read but never written in the SCoP and appears in loop bounds, conditions or
/// subscripts: an ISL parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// C identifier, also its ISL name.
    pub name: String,
    /// C type spelling of the variable, e.g. `int`, `long`.
    pub c_type: String,
    pub storage: Storage,
}

/// An array or scalar variable accessed by the SCoP's statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Array {
    pub id: ArrayId,
    /// C identifier.
    pub name: String,
    /// Tuple name used in ISL strings (the C name unless that would clash).
    pub isl_name: String,
    /// C spelling of the element type (canonical), e.g. `double`, `float`, `int`.
    pub elem_type: String,
    /// Number of subscripts; 0 for a scalar.
    pub rank: usize,
    /// The extent of each dimension (`rank` entries, outermost first) where the declared type
    /// makes it a compile-time constant: `None` for a pointer's first dimension and for
    /// variable-length ones. Generated code uses the constant inner extents so that the C
    /// compiler knows the strides (it cannot analyze dependences through runtime strides).
    pub extents: Vec<Option<u64>>,
    pub storage: Storage,
    /// Written by some statement of the SCoP.
    pub written: bool,
}

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    Write,
}

/// One array reference of a statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub kind: AccessKind,
    pub array: ArrayId,
    /// ISL map from the statement's instances to array elements,
    /// e.g. `[n] -> { S0[i, j] -> A[i, j + 1] }`; `{ S1[i] -> alpha[] }` for a scalar.
    pub relation: String,
}

/// A piece of a statement's source text: the statement is re-emitted by printing the pieces in
/// order, with iterators replaced by expressions of the new loop counters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyPiece {
    /// Verbatim source text (may contain macros, comments, newlines).
    Text(String),
    /// An occurrence of the statement's `k`-th iterator (an identifier token in the source).
    Iter(usize),
    /// An occurrence of a variable of [`Scop::arrays`] by its identifier, so that generated code
    /// may reach it differently (a written local scalar becomes `(*name)`).
    Var(ArrayId),
}

/// One statement: an expression statement nested in affine loops and conditions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub id: StmtId,
    /// Names of the enclosing loop iterators, outermost first (the C names).
    pub iterators: Vec<String>,
    /// Iteration domain, e.g. `[n] -> { S0[i, j] : 0 <= i < n and 0 <= j <= i }`.
    pub domain: String,
    /// Original 2d+1 schedule, e.g. `[n] -> { S0[i, j] -> [0, i, 1, j, 0] }`. All statements of a
    /// SCoP have schedules with the same number of output dimensions (padded with zeros).
    pub schedule: String,
    pub accesses: Vec<Access>,
    /// The statement's text, including its `;`.
    pub body: Vec<BodyPiece>,
    pub span: Span,
    pub loc: Loc,
}

/// A static control part: a region of a function whose control flow and subscripts are affine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scop {
    /// Name of the enclosing function.
    pub function: String,
    /// Bytes replaced by generated code: from the start of the `#pragma scop` line to the end of
    /// the `#pragma endscop` line (its newline included), or, for nests found without pragmas,
    /// their statements (the last `;` included), widened to whole lines when no other code
    /// shares them.
    pub region: Span,
    /// Byte offset at file scope before which generated helper code (task functions) may be
    /// inserted: the start of the enclosing function definition (its leading line).
    pub insert_at: usize,
    pub loc: Loc,
    pub params: Vec<Param>,
    /// Constraints on the parameters known to hold, e.g. `[n] -> { : n >= 0 }`; `{ : }` if none.
    pub context: String,
    pub arrays: Vec<Array>,
    pub statements: Vec<Statement>,
    /// The macros the statements' text expands, directly or inside other macros, each defined
    /// before the macros whose replacement mentions it: with these lines the statements compile
    /// in a file of their own (no includes, no `-D` options). Not part of `--emit scop`.
    pub macros: Vec<MacroDef>,
    /// Macros the statements expand that have no definition to copy (built into the
    /// preprocessor, like `__LINE__`): code outside the user's file cannot reproduce them.
    pub undefined_macros: Vec<UndefinedMacro>,
}

/// A macro definition a SCoP's statements need (see [`Scop::macros`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroDef {
    pub name: String,
    /// The whole definition on one line, e.g. `#define SQRT_FUN(x) sqrt(x)`.
    pub define: String,
    /// Where it is written: a file path, `<command line>` for a `-D` option, `<built-in>` for
    /// a macro the compiler predefines.
    pub origin: String,
}

/// A macro a SCoP's statements expand whose definition is unknown (see
/// [`Scop::undefined_macros`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UndefinedMacro {
    pub name: String,
    /// Where the statement text expands it (the outermost macro written there, when it is
    /// used inside another macro's replacement).
    pub loc: Loc,
}

impl Scop {
    pub fn array(&self, id: ArrayId) -> &Array {
        &self.arrays[id.index()]
    }

    pub fn statement(&self, id: StmtId) -> &Statement {
        &self.statements[id.index()]
    }

    /// The ISL parameter list, e.g. `[n, m]` (empty brackets when there are none).
    pub fn isl_params(&self) -> String {
        let names: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        format!("[{}]", names.join(", "))
    }
}
