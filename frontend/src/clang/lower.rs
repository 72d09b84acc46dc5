//! Lowering: libclang's cursors, tokens, diagnostics, skipped ranges and preprocessing record
//! of one translation unit turned into the owned syntax of [`super::syntax`], read through the
//! accessors of [`super::ffi`].

use std::os::raw::c_uint;
use std::ptr;

use clang_sys::*;

use super::ffi::*;
use super::syntax::*;
use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::{Loc, Span};

/// Lowers libclang objects of one translation unit.
pub(super) struct Lowerer<'t> {
    pub(super) tu: &'t TranslationUnit<'t>,
    pub(super) main_file: CXFile,
    pub(super) text_len: usize,
}

impl<'t> Lowerer<'t> {
    pub(super) fn is_main(&self, file: CXFile) -> bool {
        // SAFETY: both are file handles of the live translation unit (NULL is excluded first).
        !file.is_null() && unsafe { clang_File_isEqual(file, self.main_file) } != 0
    }

    /// Offsets of a range's ends in the main file, if both lie there.
    pub(super) fn main_span(&self, range: CXSourceRange) -> Option<Span> {
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

    pub(super) fn diagnostics(&self) -> Vec<Diagnostic> {
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

    pub(super) fn tokens(&self) -> Vec<Token> {
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
    pub(super) fn tokenize(&self, range: CXSourceRange) -> Vec<(TokenKind, String, CXSourceRange)> {
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

    pub(super) fn skipped_ranges(&self) -> Vec<Span> {
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
    pub(super) fn macros(&self, top: &[Cursor<'t>]) -> (Vec<MacroDef>, Vec<MacroUse>) {
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
    pub(super) fn macro_tokens(&self, range: CXSourceRange) -> Vec<MacroToken> {
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
    pub(super) fn presumed_file(&self, c: &Cursor<'t>) -> String {
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

    pub(super) fn functions(&self, top: &[Cursor<'t>]) -> Vec<Function> {
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

    pub(super) fn node(&self, c: Cursor<'t>, depth: usize) -> Node {
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

    pub(super) fn kind(&self, c: Cursor<'t>) -> Kind {
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

    pub(super) fn decl(&self, d: Cursor<'t>) -> Decl {
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
pub(super) fn outer_array_is_restrict(spelling: &str) -> bool {
    let Some(open) = spelling.find('[') else {
        return false;
    };
    let inside = spelling[open + 1..].split(']').next().unwrap_or("");
    inside
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| matches!(w, "restrict" | "__restrict" | "__restrict__"))
}

pub(super) fn bin_op(k: CXBinaryOperatorKind) -> BinOp {
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

pub(super) fn un_op(k: CXUnaryOperatorKind) -> UnOp {
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
