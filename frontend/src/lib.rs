//! C source to [`ir::Scop`]: parses with libclang 19 and extracts static control parts.
//!
//! Owns: libclang (all of it lives in the `clang` module), SCoP detection, affine expression
//! extraction, diagnostics with `file:line:col`. Produces plain data ([`ir`]); never links ISL.

pub mod ir;
