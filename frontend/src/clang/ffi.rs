//! The raw side of libclang: owners of its index and translation unit (disposed in order),
//! its strings copied out, locations resolved to the main file, and cursors and types that can
//! only be read through safe accessors borrowing the live translation unit. Nothing here
//! outlives [`super::parse`].

use std::ffi::CStr;
use std::os::raw::{c_uint, c_void};
use std::ptr;

use clang_sys::*;

use super::syntax::*;
use super::ClangError;

/// Owns a `CXIndex`.
pub(super) struct Index(pub(super) CXIndex);

impl Index {
    pub(super) fn new() -> Result<Index, ClangError> {
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
pub(super) struct TranslationUnit<'i> {
    pub(super) ptr: CXTranslationUnit,
    pub(super) _index: &'i Index,
}

impl Drop for TranslationUnit<'_> {
    fn drop(&mut self) {
        // SAFETY: the pointer came from a successful `clang_parseTranslationUnit2` and nothing
        // derived from it outlives this value (everything is lowered to owned data).
        unsafe { clang_disposeTranslationUnit(self.ptr) }
    }
}

/// Takes ownership of a `CXString` and copies it.
pub(super) fn take_string(s: CXString) -> String {
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
pub(super) struct FileLoc {
    pub(super) file: CXFile,
    pub(super) line: u32,
    pub(super) col: u32,
    pub(super) offset: usize,
}

/// Resolves a location of the translation unit `_tu` (the borrow keeps it alive).
pub(super) fn file_location(_tu: &TranslationUnit<'_>, loc: CXSourceLocation) -> FileLoc {
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

pub(super) fn file_name(_tu: &TranslationUnit<'_>, file: CXFile) -> String {
    if file.is_null() {
        return String::new();
    }
    // SAFETY: `file` is a non-NULL file handle of the live translation unit `_tu`.
    take_string(unsafe { clang_getFileName(file) })
}

/// A cursor of the translation unit `'t`; only readable through safe accessors.
#[derive(Clone, Copy)]
pub(super) struct Cursor<'t> {
    pub(super) raw: CXCursor,
    pub(super) tu: &'t TranslationUnit<'t>,
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
    pub(super) fn wrap(&self, raw: CXCursor) -> Cursor<'t> {
        Cursor { raw, tu: self.tu }
    }

    pub(super) fn kind(&self) -> CXCursorKind {
        // SAFETY: `raw` is a cursor of the live translation unit `tu`.
        unsafe { clang_getCursorKind(self.raw) }
    }

    pub(super) fn is_null(&self) -> bool {
        // SAFETY: as in `kind`.
        unsafe { clang_Cursor_isNull(self.raw) != 0 }
    }

    pub(super) fn is_definition(&self) -> bool {
        // SAFETY: as in `kind`.
        unsafe { clang_isCursorDefinition(self.raw) != 0 }
    }

    pub(super) fn spelling(&self) -> String {
        // SAFETY: as in `kind`; the returned string is owned and disposed by `take_string`.
        take_string(unsafe { clang_getCursorSpelling(self.raw) })
    }

    pub(super) fn extent(&self) -> CXSourceRange {
        // SAFETY: as in `kind`.
        unsafe { clang_getCursorExtent(self.raw) }
    }

    pub(super) fn location(&self) -> FileLoc {
        // SAFETY: as in `kind`.
        file_location(self.tu, unsafe { clang_getCursorLocation(self.raw) })
    }

    pub(super) fn ty(&self) -> Type<'t> {
        // SAFETY: as in `kind`.
        let raw = unsafe { clang_getCursorType(self.raw) };
        Type { raw, tu: self.tu }
    }

    pub(super) fn referenced(&self) -> Cursor<'t> {
        // SAFETY: as in `kind`.
        self.wrap(unsafe { clang_getCursorReferenced(self.raw) })
    }

    pub(super) fn canonical(&self) -> Cursor<'t> {
        // SAFETY: as in `kind`.
        self.wrap(unsafe { clang_getCanonicalCursor(self.raw) })
    }

    pub(super) fn semantic_parent(&self) -> Cursor<'t> {
        // SAFETY: as in `kind`.
        self.wrap(unsafe { clang_getCursorSemanticParent(self.raw) })
    }

    pub(super) fn binary_operator(&self) -> CXBinaryOperatorKind {
        // SAFETY: as in `kind`; libclang answers `Invalid` for cursors that are not operators.
        unsafe { clang_getCursorBinaryOperatorKind(self.raw) }
    }

    pub(super) fn unary_operator(&self) -> CXUnaryOperatorKind {
        // SAFETY: as in `binary_operator`.
        unsafe { clang_getCursorUnaryOperatorKind(self.raw) }
    }

    pub(super) fn enum_value(&self) -> i64 {
        // SAFETY: as in `kind`; only called on enumeration constant declarations.
        unsafe { clang_getEnumConstantDeclValue(self.raw) }
    }

    pub(super) fn children(&self) -> Vec<Cursor<'t>> {
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
    pub(super) fn evaluate_int(&self) -> Option<i64> {
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
pub(super) struct Type<'t> {
    pub(super) raw: CXType,
    pub(super) tu: &'t TranslationUnit<'t>,
}

impl<'t> Type<'t> {
    pub(super) fn wrap(&self, raw: CXType) -> Type<'t> {
        Type { raw, tu: self.tu }
    }

    pub(super) fn canonical(&self) -> Type<'t> {
        // SAFETY: `raw` is a type of the live translation unit `tu`.
        self.wrap(unsafe { clang_getCanonicalType(self.raw) })
    }

    pub(super) fn unqualified(&self) -> Type<'t> {
        // SAFETY: as in `canonical`.
        self.wrap(unsafe { clang_getUnqualifiedType(self.raw) })
    }

    pub(super) fn pointee(&self) -> Type<'t> {
        // SAFETY: as in `canonical`.
        self.wrap(unsafe { clang_getPointeeType(self.raw) })
    }

    pub(super) fn array_element(&self) -> Type<'t> {
        // SAFETY: as in `canonical`.
        self.wrap(unsafe { clang_getArrayElementType(self.raw) })
    }

    /// The number of elements of a constant-size array type (libclang answers -1 otherwise).
    pub(super) fn array_size(&self) -> Option<u64> {
        // SAFETY: as in `canonical`.
        u64::try_from(unsafe { clang_getArraySize(self.raw) }).ok()
    }

    pub(super) fn is_restrict(&self) -> bool {
        // SAFETY: as in `canonical`.
        unsafe { clang_isRestrictQualifiedType(self.raw) != 0 }
    }

    pub(super) fn spelling(&self) -> String {
        // SAFETY: as in `canonical`; the string is owned and disposed by `take_string`.
        take_string(unsafe { clang_getTypeSpelling(self.raw) })
    }

    pub(super) fn lower(&self, depth: usize) -> CType {
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
