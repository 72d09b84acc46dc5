//! The only module that talks to libclang: parses one C file and lowers everything the SCoP
//! extractor needs into owned data at once.
//!
//! [`parse`] returns a [`ParsedFile`]: libclang's diagnostics, the main file's tokens (raw, as
//! written: macros are not expanded), the ranges the preprocessor skipped, and every function
//! *definition* of the main file with its body lowered into a [`Node`] tree, and, from the
//! detailed preprocessing record, every macro definition (tokens and origin) and the macro
//! expansions written in the main file (each with its definition). No libclang handle
//! leaves this module; the index and translation unit are disposed before `parse` returns.
//!
//! Locations are byte offsets in the main file obtained with `clang_getFileLocation`: a location
//! inside a macro body maps to the place where the macro was expanded, a location inside a macro
//! argument to the place where the argument was written. A location that lies in another file
//! (a header) is recorded as "not in the main file" and its offset is not used.
//!
//! Architecture invariant: this module interprets nothing (no affine analysis, no SCoP rules); it
//! only translates libclang's view into plain Rust values.

#![allow(unsafe_code)] // the FFI boundary of the crate
#![allow(non_upper_case_globals)] // libclang's constants keep their C names

use std::ffi::{CStr, CString};
use std::os::raw::{c_int, c_uint, c_ulong, c_void};
use std::ptr;

use clang_sys::*;

use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::{Loc, Span};

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

/// Parses `text` as the contents of the file `path` with the given command-line arguments; with
/// `macros`, the result has the macro definitions and the main file's expansions (libclang's
/// detailed preprocessing record), else none.
///
/// The text is always handed to libclang as an unsaved file, so that the offsets in the result
/// are offsets in `text` even if the file on disk changes meanwhile.
pub(crate) fn parse(
    path: &str,
    text: &str,
    args: &[String],
    macros: bool,
) -> Result<ParsedFile, ClangError> {
    let c_path =
        CString::new(path).map_err(|_| ClangError(format!("path {path:?} contains NUL")))?;
    let c_args = args
        .iter()
        .map(|a| CString::new(a.as_str()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| ClangError("a clang argument contains NUL".to_string()))?;
    let arg_ptrs: Vec<*const std::os::raw::c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
    let n_args = c_int::try_from(arg_ptrs.len())
        .map_err(|_| ClangError("too many clang arguments".to_string()))?;
    let text_len = c_ulong::try_from(text.len())
        .map_err(|_| ClangError("source text too large".to_string()))?;

    let index = Index::new()?;
    let mut unsaved = CXUnsavedFile {
        Filename: c_path.as_ptr(),
        Contents: text.as_ptr().cast(),
        Length: text_len,
    };
    let mut tu_ptr: CXTranslationUnit = ptr::null_mut();
    // SAFETY: every pointer passed lives until the call returns (`c_path`, `arg_ptrs` and the
    // strings they point into, `text` through `unsaved`); `tu_ptr` is a valid out-pointer.
    let code = unsafe {
        clang_parseTranslationUnit2(
            index.0,
            c_path.as_ptr(),
            arg_ptrs.as_ptr(),
            n_args,
            &mut unsaved,
            1,
            if macros {
                CXTranslationUnit_DetailedPreprocessingRecord
            } else {
                CXTranslationUnit_None
            },
            &mut tu_ptr,
        )
    };
    if code != CXError_Success || tu_ptr.is_null() {
        return Err(ClangError(format!(
            "libclang could not parse {path} (error code {code})"
        )));
    }
    let tu = TranslationUnit {
        ptr: tu_ptr,
        _index: &index,
    };
    // SAFETY: `tu` is a live translation unit and `c_path` a NUL-terminated string.
    let main_file = unsafe { clang_getFile(tu.ptr, c_path.as_ptr()) };
    if main_file.is_null() {
        return Err(ClangError(format!(
            "libclang does not know the main file {path}"
        )));
    }
    let lowerer = Lowerer {
        tu: &tu,
        main_file,
        text_len: text.len(),
    };
    // SAFETY: the translation unit is live.
    let raw_root = unsafe { clang_getTranslationUnitCursor(tu.ptr) };
    let top = Cursor {
        raw: raw_root,
        tu: &tu,
    }
    .children();
    let (macro_defs, macro_uses) = lowerer.macros(&top);
    Ok(ParsedFile {
        diagnostics: lowerer.diagnostics(),
        tokens: lowerer.tokens(),
        skipped: lowerer.skipped_ranges(),
        functions: lowerer.functions(&top),
        macro_defs,
        macro_uses,
    })
}

/// Owns a `CXIndex`.
struct Index(CXIndex);

impl Index {
    fn new() -> Result<Index, ClangError> {
        // SAFETY: plain constructor; the result is checked for NULL and disposed in `Drop`.
        let raw = unsafe { clang_createIndex(0, 0) };
        if raw.is_null() {
            Err(ClangError("clang_createIndex failed".to_string()))
        } else {
            Ok(Index(raw))
        }
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        // SAFETY: the index was created by `clang_createIndex` and every translation unit made
        // from it (which borrows it) has been dropped before.
        unsafe { clang_disposeIndex(self.0) }
    }
}

/// Owns a `CXTranslationUnit`; borrows its index so that it is disposed first.
struct TranslationUnit<'i> {
    ptr: CXTranslationUnit,
    _index: &'i Index,
}

impl Drop for TranslationUnit<'_> {
    fn drop(&mut self) {
        // SAFETY: the pointer came from a successful `clang_parseTranslationUnit2` and nothing
        // derived from it outlives this value (everything is lowered to owned data).
        unsafe { clang_disposeTranslationUnit(self.ptr) }
    }
}

/// Takes ownership of a `CXString` and copies it.
fn take_string(s: CXString) -> String {
    // SAFETY: `s` is a string returned by libclang that we own; `clang_getCString` returns
    // NULL or a NUL-terminated string valid until `clang_disposeString`, which is called last.
    unsafe {
        let p = clang_getCString(s);
        let out = if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        };
        clang_disposeString(s);
        out
    }
}

/// A location resolved with `clang_getFileLocation`.
struct FileLoc {
    file: CXFile,
    line: u32,
    col: u32,
    offset: usize,
}

/// Resolves a location of the translation unit `_tu` (the borrow keeps it alive).
fn file_location(_tu: &TranslationUnit<'_>, loc: CXSourceLocation) -> FileLoc {
    let mut file: CXFile = ptr::null_mut();
    let (mut line, mut col, mut offset): (c_uint, c_uint, c_uint) = (0, 0, 0);
    // SAFETY: `loc` comes from the live translation unit `_tu`; all out-pointers are valid.
    unsafe { clang_getFileLocation(loc, &mut file, &mut line, &mut col, &mut offset) };
    FileLoc {
        file,
        line,
        col,
        offset: offset as usize,
    }
}

fn file_name(_tu: &TranslationUnit<'_>, file: CXFile) -> String {
    if file.is_null() {
        return String::new();
    }
    // SAFETY: `file` is a non-NULL file handle of the live translation unit `_tu`.
    take_string(unsafe { clang_getFileName(file) })
}

/// A cursor of the translation unit `'t`; only readable through safe accessors.
#[derive(Clone, Copy)]
struct Cursor<'t> {
    raw: CXCursor,
    tu: &'t TranslationUnit<'t>,
}

/// `clang_visitChildren` callback: collects the children into a `Vec<CXCursor>`.
extern "C" fn collect_child(
    cursor: CXCursor,
    _parent: CXCursor,
    data: CXClientData,
) -> CXChildVisitResult {
    // SAFETY: `data` is the `&mut Vec<CXCursor>` passed by `Cursor::children`, alive for the
    // whole `clang_visitChildren` call and not otherwise accessed meanwhile.
    let out = unsafe { &mut *(data as *mut Vec<CXCursor>) };
    out.push(cursor);
    CXChildVisit_Continue
}

impl<'t> Cursor<'t> {
    fn wrap(&self, raw: CXCursor) -> Cursor<'t> {
        Cursor { raw, tu: self.tu }
    }

    fn kind(&self) -> CXCursorKind {
        // SAFETY: `raw` is a cursor of the live translation unit `tu`.
        unsafe { clang_getCursorKind(self.raw) }
    }

    fn is_null(&self) -> bool {
        // SAFETY: as in `kind`.
        unsafe { clang_Cursor_isNull(self.raw) != 0 }
    }

    fn is_definition(&self) -> bool {
        // SAFETY: as in `kind`.
        unsafe { clang_isCursorDefinition(self.raw) != 0 }
    }

    fn spelling(&self) -> String {
        // SAFETY: as in `kind`; the returned string is owned and disposed by `take_string`.
        take_string(unsafe { clang_getCursorSpelling(self.raw) })
    }

    fn extent(&self) -> CXSourceRange {
        // SAFETY: as in `kind`.
        unsafe { clang_getCursorExtent(self.raw) }
    }

    fn location(&self) -> FileLoc {
        // SAFETY: as in `kind`.
        file_location(self.tu, unsafe { clang_getCursorLocation(self.raw) })
    }

    fn ty(&self) -> Type<'t> {
        // SAFETY: as in `kind`.
        let raw = unsafe { clang_getCursorType(self.raw) };
        Type { raw, tu: self.tu }
    }

    fn referenced(&self) -> Cursor<'t> {
        // SAFETY: as in `kind`.
        self.wrap(unsafe { clang_getCursorReferenced(self.raw) })
    }

    fn canonical(&self) -> Cursor<'t> {
        // SAFETY: as in `kind`.
        self.wrap(unsafe { clang_getCanonicalCursor(self.raw) })
    }

    fn semantic_parent(&self) -> Cursor<'t> {
        // SAFETY: as in `kind`.
        self.wrap(unsafe { clang_getCursorSemanticParent(self.raw) })
    }

    fn binary_operator(&self) -> CXBinaryOperatorKind {
        // SAFETY: as in `kind`; libclang answers `Invalid` for cursors that are not operators.
        unsafe { clang_getCursorBinaryOperatorKind(self.raw) }
    }

    fn unary_operator(&self) -> CXUnaryOperatorKind {
        // SAFETY: as in `binary_operator`.
        unsafe { clang_getCursorUnaryOperatorKind(self.raw) }
    }

    fn enum_value(&self) -> i64 {
        // SAFETY: as in `kind`; only called on enumeration constant declarations.
        unsafe { clang_getEnumConstantDeclValue(self.raw) }
    }

    fn children(&self) -> Vec<Cursor<'t>> {
        let mut out: Vec<CXCursor> = Vec::new();
        // SAFETY: `collect_child` only pushes onto `out`, which outlives the call.
        unsafe {
            clang_visitChildren(
                self.raw,
                collect_child,
                &mut out as *mut Vec<CXCursor> as *mut c_void,
            )
        };
        out.into_iter().map(|raw| self.wrap(raw)).collect()
    }

    /// Value of an integer constant expression, if it evaluates to one that fits an `i64`.
    fn evaluate_int(&self) -> Option<i64> {
        // SAFETY: as in `kind`; the result is checked for NULL, only queried while alive, and
        // disposed once.
        unsafe {
            let r = clang_Cursor_Evaluate(self.raw);
            if r.is_null() {
                return None;
            }
            let value = if clang_EvalResult_getKind(r) != CXEval_Int {
                None
            } else if clang_EvalResult_isUnsignedInt(r) != 0 {
                i64::try_from(clang_EvalResult_getAsUnsigned(r)).ok()
            } else {
                Some(clang_EvalResult_getAsLongLong(r))
            };
            clang_EvalResult_dispose(r);
            value
        }
    }
}

/// A type of the translation unit `'t`.
#[derive(Clone, Copy)]
struct Type<'t> {
    raw: CXType,
    tu: &'t TranslationUnit<'t>,
}

impl<'t> Type<'t> {
    fn wrap(&self, raw: CXType) -> Type<'t> {
        Type { raw, tu: self.tu }
    }

    fn canonical(&self) -> Type<'t> {
        // SAFETY: `raw` is a type of the live translation unit `tu`.
        self.wrap(unsafe { clang_getCanonicalType(self.raw) })
    }

    fn unqualified(&self) -> Type<'t> {
        // SAFETY: as in `canonical`.
        self.wrap(unsafe { clang_getUnqualifiedType(self.raw) })
    }

    fn pointee(&self) -> Type<'t> {
        // SAFETY: as in `canonical`.
        self.wrap(unsafe { clang_getPointeeType(self.raw) })
    }

    fn array_element(&self) -> Type<'t> {
        // SAFETY: as in `canonical`.
        self.wrap(unsafe { clang_getArrayElementType(self.raw) })
    }

    /// The number of elements of a constant-size array type (libclang answers -1 otherwise).
    fn array_size(&self) -> Option<u64> {
        // SAFETY: as in `canonical`.
        u64::try_from(unsafe { clang_getArraySize(self.raw) }).ok()
    }

    fn is_restrict(&self) -> bool {
        // SAFETY: as in `canonical`.
        unsafe { clang_isRestrictQualifiedType(self.raw) != 0 }
    }

    fn spelling(&self) -> String {
        // SAFETY: as in `canonical`; the string is owned and disposed by `take_string`.
        take_string(unsafe { clang_getTypeSpelling(self.raw) })
    }

    fn lower(&self, depth: usize) -> CType {
        let canonical = self.canonical();
        let spelling = canonical.spelling();
        if depth > 16 {
            return CType::Other(spelling);
        }
        let class = match canonical.raw.kind {
            CXType_Char_S | CXType_SChar | CXType_Short | CXType_Int | CXType_Long
            | CXType_LongLong | CXType_Int128 => Some(ScalarClass::SignedInt),
            CXType_Bool | CXType_Char_U | CXType_UChar | CXType_UShort | CXType_UInt
            | CXType_ULong | CXType_ULongLong | CXType_UInt128 => Some(ScalarClass::UnsignedInt),
            CXType_Float | CXType_Double | CXType_LongDouble => Some(ScalarClass::Float),
            _ => None,
        };
        if let Some(class) = class {
            let unqualified = canonical.unqualified().spelling();
            return CType::Scalar {
                class,
                spelling,
                unqualified,
            };
        }
        match canonical.raw.kind {
            CXType_Pointer => CType::Pointer(Box::new(canonical.pointee().lower(depth + 1))),
            CXType_ConstantArray => CType::Array(
                Box::new(canonical.array_element().lower(depth + 1)),
                canonical.array_size(),
            ),
            CXType_IncompleteArray | CXType_VariableArray | CXType_DependentSizedArray => {
                CType::Array(Box::new(canonical.array_element().lower(depth + 1)), None)
            }
            _ => CType::Other(spelling),
        }
    }
}

/// Lowers libclang objects of one translation unit.
struct Lowerer<'t> {
    tu: &'t TranslationUnit<'t>,
    main_file: CXFile,
    text_len: usize,
}

impl<'t> Lowerer<'t> {
    fn is_main(&self, file: CXFile) -> bool {
        // SAFETY: both are file handles of the live translation unit (NULL is excluded first).
        !file.is_null() && unsafe { clang_File_isEqual(file, self.main_file) } != 0
    }

    /// Offsets of a range's ends in the main file, if both lie there.
    fn main_span(&self, range: CXSourceRange) -> Option<Span> {
        // SAFETY: `range` comes from the live translation unit.
        let (start, end) = unsafe { (clang_getRangeStart(range), clang_getRangeEnd(range)) };
        let (s, e) = (file_location(self.tu, start), file_location(self.tu, end));
        if self.is_main(s.file)
            && self.is_main(e.file)
            && s.offset <= e.offset
            && e.offset <= self.text_len
        {
            Some(Span {
                start: s.offset,
                end: e.offset,
            })
        } else {
            None
        }
    }

    fn diagnostics(&self) -> Vec<Diagnostic> {
        // SAFETY: the translation unit is live.
        let n = unsafe { clang_getNumDiagnostics(self.tu.ptr) };
        let mut out: Vec<Diagnostic> = Vec::new();
        for i in 0..n {
            // SAFETY: `i` is below the count; the diagnostic is disposed below.
            let d = unsafe { clang_getDiagnostic(self.tu.ptr, i) };
            if d.is_null() {
                continue;
            }
            // SAFETY: `d` is a live diagnostic; the string is owned and disposed by `take_string`.
            let (severity, loc, message) = unsafe {
                (
                    clang_getDiagnosticSeverity(d),
                    clang_getDiagnosticLocation(d),
                    take_string(clang_getDiagnosticSpelling(d)),
                )
            };
            let fl = file_location(self.tu, loc);
            let file = file_name(self.tu, fl.file);
            // SAFETY: `d` came from `clang_getDiagnostic` and is not used afterwards.
            unsafe { clang_disposeDiagnostic(d) };
            let severity = match severity {
                CXDiagnostic_Error | CXDiagnostic_Fatal => Severity::Error,
                CXDiagnostic_Warning => Severity::Warning,
                CXDiagnostic_Note => Severity::Note,
                _ => continue,
            };
            // A few diagnostics have no location ("too many errors emitted"): they are about
            // the place of the one before them, or else the main file.
            let (file, loc) = if file.is_empty() || fl.line == 0 {
                match out.last() {
                    Some(prev) => (prev.file.clone(), prev.loc),
                    None => (file_name(self.tu, self.main_file), Loc { line: 1, col: 1 }),
                }
            } else {
                (
                    file,
                    Loc {
                        line: fl.line,
                        col: fl.col.max(1),
                    },
                )
            };
            out.push(Diagnostic {
                severity,
                file,
                loc,
                kind: crate::diagnostic::Kind::Clang(message),
            });
        }
        out
    }

    fn tokens(&self) -> Vec<Token> {
        let Ok(len) = c_uint::try_from(self.text_len) else {
            return Vec::new();
        };
        // SAFETY: the translation unit and main file handle are live; offsets are in range.
        let range = unsafe {
            clang_getRange(
                clang_getLocationForOffset(self.tu.ptr, self.main_file, 0),
                clang_getLocationForOffset(self.tu.ptr, self.main_file, len),
            )
        };
        self.tokenize(range)
            .into_iter()
            .filter_map(|(kind, spelling, extent)| {
                let span = self.main_span(extent)?;
                Some(Token {
                    kind,
                    spelling,
                    span,
                })
            })
            .collect()
    }

    /// The tokens of a range of the unit (any file, the predefines buffer too), comments left
    /// out, with their extents.
    fn tokenize(&self, range: CXSourceRange) -> Vec<(TokenKind, String, CXSourceRange)> {
        let mut raw: *mut CXToken = ptr::null_mut();
        let mut n: c_uint = 0;
        // SAFETY: `range` comes from the live translation unit; out-pointers are valid; the
        // token array is disposed below.
        unsafe { clang_tokenize(self.tu.ptr, range, &mut raw, &mut n) };
        if raw.is_null() {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            // SAFETY: `raw` points to `n` tokens owned by us until `clang_disposeTokens`; each
            // token belongs to this translation unit; the spelling is owned and disposed.
            let (kind, spelling, extent) = unsafe {
                let tok = *raw.add(i);
                (
                    clang_getTokenKind(tok),
                    take_string(clang_getTokenSpelling(self.tu.ptr, tok)),
                    clang_getTokenExtent(self.tu.ptr, tok),
                )
            };
            let kind = match kind {
                CXToken_Punctuation => TokenKind::Punctuation,
                CXToken_Keyword => TokenKind::Keyword,
                CXToken_Identifier => TokenKind::Identifier,
                CXToken_Literal => TokenKind::Literal,
                _ => continue, // comments
            };
            out.push((kind, spelling, extent));
        }
        // SAFETY: `raw`/`n` are exactly what `clang_tokenize` returned, disposed once.
        unsafe { clang_disposeTokens(self.tu.ptr, raw, n) };
        out
    }

    fn skipped_ranges(&self) -> Vec<Span> {
        // SAFETY: the translation unit and main file are live; the list is disposed below.
        let list = unsafe { clang_getSkippedRanges(self.tu.ptr, self.main_file) };
        if list.is_null() {
            return Vec::new();
        }
        // SAFETY: `list` is a valid range list holding `count` ranges (or a NULL array).
        let ranges: Vec<CXSourceRange> = unsafe {
            let count = (*list).count as usize;
            let base = (*list).ranges;
            if base.is_null() {
                Vec::new()
            } else {
                (0..count).map(|i| *base.add(i)).collect()
            }
        };
        // SAFETY: `list` came from `clang_getSkippedRanges` and is not used afterwards.
        unsafe { clang_disposeSourceRangeList(list) };
        ranges
            .into_iter()
            .filter_map(|r| self.main_span(r))
            .collect()
    }

    /// The macro definitions and the main file's macro expansions among the top-level cursors
    /// `top` (libclang visits the preprocessing record, in preprocessing order, with them).
    fn macros(&self, top: &[Cursor<'t>]) -> (Vec<MacroDef>, Vec<MacroUse>) {
        let mut defs: Vec<MacroDef> = Vec::new();
        // A definition's identity: its name's file and offset.
        let mut def_at: std::collections::HashMap<(usize, usize), usize> =
            std::collections::HashMap::new();
        let mut uses: Vec<MacroUse> = Vec::new();
        let mut seq = 0usize;
        for c in top {
            match c.kind() {
                CXCursor_MacroDefinition => {
                    let loc = c.location();
                    def_at.insert((loc.file as usize, loc.offset), defs.len());
                    // SAFETY: `c` is a macro definition cursor of the live translation unit.
                    let function_like = unsafe { clang_Cursor_isMacroFunctionLike(c.raw) } != 0;
                    let mut tokens = self.macro_tokens(c.extent());
                    if !tokens.is_empty() {
                        tokens.remove(0); // the name
                    }
                    defs.push(MacroDef {
                        name: c.spelling(),
                        seq,
                        function_like,
                        tokens,
                        origin: self.presumed_file(c),
                    });
                }
                CXCursor_MacroExpansion => {
                    let loc = c.location();
                    if !self.is_main(loc.file) {
                        seq += 1;
                        continue;
                    }
                    let r = c.referenced();
                    let def = if r.is_null() || r.kind() != CXCursor_MacroDefinition {
                        None
                    } else {
                        let at = r.location();
                        def_at.get(&(at.file as usize, at.offset)).copied()
                    };
                    uses.push(MacroUse {
                        name: c.spelling(),
                        offset: loc.offset,
                        seq,
                        def,
                    });
                }
                _ => continue,
            }
            seq += 1;
        }
        (defs, uses)
    }

    /// The tokens of a macro definition's extent, spaced as written.
    fn macro_tokens(&self, range: CXSourceRange) -> Vec<MacroToken> {
        let mut prev_end: Option<(usize, usize)> = None;
        self.tokenize(range)
            .into_iter()
            .map(|(kind, spelling, extent)| {
                // SAFETY: `extent` comes from the live translation unit.
                let (start, end) =
                    unsafe { (clang_getRangeStart(extent), clang_getRangeEnd(extent)) };
                let (s, e) = (file_location(self.tu, start), file_location(self.tu, end));
                let space_before = prev_end
                    .is_some_and(|(file, offset)| file != s.file as usize || offset != s.offset);
                prev_end = Some((e.file as usize, e.offset));
                MacroToken {
                    kind,
                    spelling,
                    space_before,
                }
            })
            .collect()
    }

    /// The file name of a cursor's location as line markers present it (`<command line>`,
    /// `<built-in>` for the predefines buffer).
    fn presumed_file(&self, c: &Cursor<'t>) -> String {
        let mut name = CXString {
            data: ptr::null(),
            private_flags: 0,
        };
        let (mut line, mut col): (c_uint, c_uint) = (0, 0);
        // SAFETY: the cursor's location belongs to the live translation unit; the out-pointers
        // are valid; the string is owned and disposed by `take_string`.
        unsafe {
            clang_getPresumedLocation(
                clang_getCursorLocation(c.raw),
                &mut name,
                &mut line,
                &mut col,
            )
        };
        take_string(name)
    }

    fn functions(&self, top: &[Cursor<'t>]) -> Vec<Function> {
        let mut out = Vec::new();
        for &c in top {
            if c.kind() != CXCursor_FunctionDecl || !c.is_definition() {
                continue;
            }
            let Some(span) = self.main_span(c.extent()) else {
                continue;
            };
            let Some(body) = c
                .children()
                .into_iter()
                .rev()
                .find(|k| k.kind() == CXCursor_CompoundStmt)
            else {
                continue;
            };
            out.push(Function {
                name: c.spelling(),
                span,
                body: self.node(body, 0),
            });
        }
        out
    }

    fn node(&self, c: Cursor<'t>, depth: usize) -> Node {
        let kind = self.kind(c);
        let loc = c.location();
        let span = self.main_span(c.extent());
        let in_main_file = span.is_some() && self.is_main(loc.file);
        let decl = match kind {
            Kind::DeclRef => {
                let r = c.referenced();
                (!r.is_null()).then(|| self.decl(r))
            }
            Kind::VarDecl => Some(self.decl(c)),
            _ => None,
        };
        let int_value = if matches!(kind, Kind::IntLit | Kind::SizeOf | Kind::Cast) {
            c.evaluate_int()
        } else {
            None
        };
        let (kind, children) = if depth >= MAX_DEPTH {
            (Kind::TooDeep, Vec::new())
        } else {
            (
                kind,
                c.children()
                    .into_iter()
                    .map(|k| self.node(k, depth + 1))
                    .collect(),
            )
        };
        Node {
            kind,
            span: span.unwrap_or(Span { start: 0, end: 0 }),
            offset: loc.offset,
            in_main_file,
            ty: c.ty().lower(0),
            decl,
            int_value,
            children,
        }
    }

    fn kind(&self, c: Cursor<'t>) -> Kind {
        match c.kind() {
            CXCursor_CompoundStmt => Kind::Compound,
            CXCursor_ForStmt => Kind::For,
            CXCursor_IfStmt => Kind::If,
            CXCursor_WhileStmt => Kind::While,
            CXCursor_DoStmt => Kind::Do,
            CXCursor_SwitchStmt => Kind::Switch,
            CXCursor_ReturnStmt => Kind::Return,
            CXCursor_BreakStmt => Kind::Break,
            CXCursor_ContinueStmt => Kind::Continue,
            CXCursor_GotoStmt | CXCursor_IndirectGotoStmt => Kind::Goto,
            CXCursor_LabelStmt => Kind::Label,
            CXCursor_NullStmt => Kind::Null,
            CXCursor_DeclStmt => Kind::DeclStmt,
            CXCursor_VarDecl => Kind::VarDecl,
            CXCursor_BinaryOperator => Kind::Binary(bin_op(c.binary_operator())),
            CXCursor_CompoundAssignOperator => Kind::CompoundAssign(bin_op(c.binary_operator())),
            CXCursor_UnaryOperator => Kind::Unary(un_op(c.unary_operator())),
            CXCursor_ArraySubscriptExpr => Kind::Subscript,
            CXCursor_DeclRefExpr => Kind::DeclRef,
            CXCursor_IntegerLiteral => Kind::IntLit,
            CXCursor_FloatingLiteral => Kind::FloatLit,
            CXCursor_CharacterLiteral => Kind::CharLit,
            CXCursor_StringLiteral => Kind::StringLit,
            CXCursor_ParenExpr => Kind::Paren,
            CXCursor_CStyleCastExpr => Kind::Cast,
            CXCursor_UnexposedExpr => Kind::Unexposed,
            CXCursor_CallExpr => Kind::Call,
            CXCursor_ConditionalOperator => Kind::Conditional,
            CXCursor_MemberRefExpr => Kind::Member,
            CXCursor_UnaryExpr => Kind::SizeOf,
            CXCursor_TypeRef => Kind::TypeRef,
            // SAFETY: a plain query on a kind value; the string is owned and disposed.
            other => Kind::Other(take_string(unsafe { clang_getCursorKindSpelling(other) })),
        }
    }

    fn decl(&self, d: Cursor<'t>) -> Decl {
        let canonical = d.canonical();
        let name = canonical.spelling();
        let loc = canonical.location();
        let key = format!("{}:{}:{name}", file_name(self.tu, loc.file), loc.offset);
        let file_scope = canonical.semantic_parent().kind() == CXCursor_TranslationUnit;
        let kind = match canonical.kind() {
            CXCursor_VarDecl => DeclKind::Var,
            CXCursor_ParmDecl => DeclKind::Parm,
            CXCursor_FunctionDecl => DeclKind::Function,
            CXCursor_EnumConstantDecl => DeclKind::EnumConstant,
            _ => DeclKind::Other,
        };
        let enum_value = (kind == DeclKind::EnumConstant).then(|| canonical.enum_value());
        let ty = canonical.ty();
        // SAFETY: `canonical` is a cursor of the live translation unit.
        let is_static = unsafe { clang_Cursor_getStorageClass(canonical.raw) } == CX_SC_Static;
        Decl {
            key,
            name,
            kind,
            file_scope,
            is_static,
            ty: ty.lower(0),
            restrict: ty.canonical().is_restrict()
                || (kind == DeclKind::Parm && outer_array_is_restrict(&ty.canonical().spelling())),
            enum_value,
        }
    }
}

/// libclang gives an array parameter its type as written (`double[restrict n][n]`), not the
/// pointer C adjusts it to: the qualifiers of that pointer are inside the first brackets.
fn outer_array_is_restrict(spelling: &str) -> bool {
    let Some(open) = spelling.find('[') else {
        return false;
    };
    let inside = spelling[open + 1..].split(']').next().unwrap_or("");
    inside
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| matches!(w, "restrict" | "__restrict" | "__restrict__"))
}

fn bin_op(k: CXBinaryOperatorKind) -> BinOp {
    match k {
        CXBinaryOperator_Mul => BinOp::Mul,
        CXBinaryOperator_Div => BinOp::Div,
        CXBinaryOperator_Rem => BinOp::Rem,
        CXBinaryOperator_Add => BinOp::Add,
        CXBinaryOperator_Sub => BinOp::Sub,
        CXBinaryOperator_Shl => BinOp::Shl,
        CXBinaryOperator_Shr => BinOp::Shr,
        CXBinaryOperator_LT => BinOp::Lt,
        CXBinaryOperator_GT => BinOp::Gt,
        CXBinaryOperator_LE => BinOp::Le,
        CXBinaryOperator_GE => BinOp::Ge,
        CXBinaryOperator_EQ => BinOp::Eq,
        CXBinaryOperator_NE => BinOp::Ne,
        CXBinaryOperator_And => BinOp::BitAnd,
        CXBinaryOperator_Xor => BinOp::BitXor,
        CXBinaryOperator_Or => BinOp::BitOr,
        CXBinaryOperator_LAnd => BinOp::LAnd,
        CXBinaryOperator_LOr => BinOp::LOr,
        CXBinaryOperator_Assign => BinOp::Assign,
        CXBinaryOperator_MulAssign => BinOp::MulAssign,
        CXBinaryOperator_DivAssign => BinOp::DivAssign,
        CXBinaryOperator_RemAssign => BinOp::RemAssign,
        CXBinaryOperator_AddAssign => BinOp::AddAssign,
        CXBinaryOperator_SubAssign => BinOp::SubAssign,
        CXBinaryOperator_ShlAssign => BinOp::ShlAssign,
        CXBinaryOperator_ShrAssign => BinOp::ShrAssign,
        CXBinaryOperator_AndAssign => BinOp::AndAssign,
        CXBinaryOperator_XorAssign => BinOp::XorAssign,
        CXBinaryOperator_OrAssign => BinOp::OrAssign,
        CXBinaryOperator_Comma => BinOp::Comma,
        _ => BinOp::Other,
    }
}

fn un_op(k: CXUnaryOperatorKind) -> UnOp {
    match k {
        CXUnaryOperator_PostInc => UnOp::PostInc,
        CXUnaryOperator_PostDec => UnOp::PostDec,
        CXUnaryOperator_PreInc => UnOp::PreInc,
        CXUnaryOperator_PreDec => UnOp::PreDec,
        CXUnaryOperator_AddrOf => UnOp::AddrOf,
        CXUnaryOperator_Deref => UnOp::Deref,
        CXUnaryOperator_Plus => UnOp::Plus,
        CXUnaryOperator_Minus => UnOp::Minus,
        CXUnaryOperator_Not => UnOp::Not,
        CXUnaryOperator_LNot => UnOp::LNot,
        _ => UnOp::Other,
    }
}
