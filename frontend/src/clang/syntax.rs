//! The owned syntax the frontend reads C as: a translation unit's tokens, skipped ranges,
//! macro definitions and uses, and each function definition's body as a tree of [`Node`]s, with
//! the C types, operators and declarations the SCoP extractor asks about. Plain data: what
//! [`super::parse`] returns once libclang is gone.

#![forbid(unsafe_code)]

use crate::diagnostic::Diagnostic;
use crate::ir::Span;

/// Children deeper than this are not lowered (the node is marked [`Kind::TooDeep`]), so that
/// pathological inputs cannot exhaust the stack of this module or of its consumers.
pub(crate) const MAX_DEPTH: usize = 200;

/// Everything extracted from one translation unit.
#[derive(Debug, Default)]
pub(crate) struct ParsedFile {
    /// libclang's diagnostics (all files), in libclang's order.
    pub diagnostics: Vec<Diagnostic>,
    /// Tokens of the main file, in order (comments are left out).
    pub tokens: Vec<Token>,
    /// Byte ranges of the main file skipped by the preprocessor (`#if 0` ... `#endif`).
    pub skipped: Vec<Span>,
    /// Function definitions written in the main file, in source order.
    pub functions: Vec<Function>,
    /// Every macro definition of the translation unit (headers, `-D` options and the
    /// compiler's predefined macros included), in preprocessing order.
    pub macro_defs: Vec<MacroDef>,
    /// The macro expansions written in the main file, in order. Expansions inside the
    /// replacement of another macro are not recorded by libclang (only the outermost one is).
    pub macro_uses: Vec<MacroUse>,
}

/// A token of a macro definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MacroToken {
    pub kind: TokenKind,
    pub spelling: String,
    /// Whitespace separates it from the token before it in the definition.
    pub space_before: bool,
}

/// One `#define`, as the preprocessor saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MacroDef {
    pub name: String,
    /// Position among all preprocessing events (definitions and expansions) of the unit.
    pub seq: usize,
    /// The parameter list `(x, y)` is part of the definition.
    pub function_like: bool,
    /// The tokens after the name: the parameter list (for a function-like macro) and the
    /// replacement list.
    pub tokens: Vec<MacroToken>,
    /// Where it is written, as the preprocessor presents it: a file path, `<command line>`
    /// (a `-D` option) or `<built-in>` (predefined by the compiler).
    pub origin: String,
}

/// One macro expansion written in the main file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MacroUse {
    pub name: String,
    /// Offset of the macro's name in the main file.
    pub offset: usize,
    /// Position among all preprocessing events of the unit (see [`MacroDef::seq`]).
    pub seq: usize,
    /// Index in [`ParsedFile::macro_defs`] of the definition expanded; `None` for a macro
    /// built into the preprocessor (`__LINE__`, `__FILE__`, ...), which has no definition.
    pub def: Option<usize>,
}

/// Kind of a raw token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenKind {
    Punctuation,
    Keyword,
    Identifier,
    Literal,
}

/// One token of the main file, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub spelling: String,
    pub span: Span,
}

/// A function definition of the main file.
#[derive(Debug)]
pub(crate) struct Function {
    pub name: String,
    /// Extent of the whole definition (from its first declaration specifier).
    pub span: Span,
    /// The body (a compound statement).
    pub body: Node,
}

/// Binary operators (also the operators of compound assignments, e.g. `MulAssign`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    LAnd,
    LOr,
    Assign,
    MulAssign,
    DivAssign,
    RemAssign,
    AddAssign,
    SubAssign,
    ShlAssign,
    ShrAssign,
    AndAssign,
    XorAssign,
    OrAssign,
    Comma,
    Other,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnOp {
    PostInc,
    PostDec,
    PreInc,
    PreDec,
    AddrOf,
    Deref,
    Plus,
    Minus,
    Not,
    LNot,
    Other,
}

/// The cursor kinds the extractor distinguishes; everything else is `Other` with libclang's
/// spelling of the kind (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Compound,
    For,
    If,
    While,
    Do,
    Switch,
    Return,
    Break,
    Continue,
    Goto,
    Label,
    Null,
    DeclStmt,
    VarDecl,
    Binary(BinOp),
    CompoundAssign(BinOp),
    Unary(UnOp),
    Subscript,
    DeclRef,
    IntLit,
    FloatLit,
    CharLit,
    StringLit,
    Paren,
    Cast,
    /// Mostly implicit casts (`ImplicitCastExpr` is not exposed by libclang).
    Unexposed,
    Call,
    Conditional,
    Member,
    /// `sizeof` / `_Alignof`.
    SizeOf,
    TypeRef,
    /// Children were not lowered because the tree is too deep.
    TooDeep,
    Other(String),
}

/// Arithmetic classes of a canonical C type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScalarClass {
    SignedInt,
    UnsignedInt,
    Float,
}

/// A canonical C type, as far as the extractor cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CType {
    /// An arithmetic type: `spelling` is the canonical spelling with qualifiers (`const double`),
    /// `unqualified` without.
    Scalar {
        class: ScalarClass,
        spelling: String,
        unqualified: String,
    },
    Pointer(Box<CType>),
    /// Any array type (constant size, variable length or incomplete), with its number of
    /// elements where that is a constant.
    Array(Box<CType>, Option<u64>),
    Other(String),
}

/// What a declaration reference refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DeclKind {
    /// A variable (global or local).
    Var,
    /// A function parameter.
    Parm,
    Function,
    EnumConstant,
    Other,
}

/// The declaration a `DeclRef` (or a `VarDecl` node itself) stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Decl {
    /// Identity of the declaration: file, offset and name of its first declaration.
    pub key: String,
    pub name: String,
    pub kind: DeclKind,
    /// Declared at file scope (its semantic parent is the translation unit).
    pub file_scope: bool,
    /// Declared `static` (at file scope or, with static storage duration, in a function).
    pub is_static: bool,
    pub ty: CType,
    /// The declared type itself is a `restrict`-qualified pointer (also an array parameter
    /// written `T a[restrict n]`, which C adjusts to one).
    pub restrict: bool,
    /// Value of an enumeration constant.
    pub enum_value: Option<i64>,
}

/// One lowered cursor.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub kind: Kind,
    /// The extent (file locations); meaningful only if `in_main_file`.
    pub span: Span,
    /// Offset of the cursor's own location (e.g. the identifier of a `DeclRef`, the operator
    /// of a binary expression).
    pub offset: usize,
    /// Extent start, end and location all lie in the main file.
    pub in_main_file: bool,
    /// Canonical type of the expression or declaration.
    pub ty: CType,
    /// The referenced declaration of a `DeclRef`; the declaration itself for a `VarDecl`.
    pub decl: Option<Decl>,
    /// Value of an integer literal, a `sizeof` or a cast, when it is a constant that fits an
    /// `i64` (so that `(int)(sizeof(a) / sizeof(a[0]))` is a plain constant).
    pub int_value: Option<i64>,
    pub children: Vec<Node>,
}

/// Why libclang could not be used.
#[derive(Debug)]
pub(crate) struct ClangError(pub String);
