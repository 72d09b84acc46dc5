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
//!
//! Files: `syntax` (the owned result, no unsafe code), `ffi` (the raw handles and their safe
//! accessors), `lower` (the translation from one to the other); [`parse`] here ties them.

#![allow(unsafe_code)] // the FFI boundary of the crate
#![allow(non_upper_case_globals)] // libclang's constants keep their C names

mod ffi;
mod lower;
mod syntax;

use std::ffi::CString;
use std::os::raw::{c_int, c_ulong};
use std::ptr;

use clang_sys::*;

use ffi::{Cursor, Index, TranslationUnit};
use lower::Lowerer;
pub(crate) use syntax::*;

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
