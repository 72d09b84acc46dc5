//! Safe wrappers over the parts of ISL 0.27 that this crate uses, and the CPU clock of the thread
//! that runs it (`cpu_clock`); the only module with `unsafe` code.
//!
//! Ownership follows ISL's annotations: a method that takes `self` by value passes an object ISL
//! consumes (`__isl_take`), one that takes `&self` lends it (`__isl_keep`), and every returned
//! object is owned by the caller (`__isl_give`). `Clone` is `isl_*_copy` (a reference count),
//! `Drop` is `isl_*_free`. A NULL result (or an `isl_bool`/`isl_size` of -1) becomes
//! [`Error::Isl`](crate::Error::Isl) with ISL's last error message: the context is created with
//! `on_error = continue`, so ISL never prints or aborts.
//!
//! Every object borrows the [`Ctx`] it belongs to, so none outlives it, and none is `Send` or `Sync`
//! (an `isl_ctx` is single-threaded). The raw pointers never leave this module.
//!
//! The library is the static `libisl.a` that the `isl-rs` crate builds and links; the declarations
//! are our own ([`ffi`]), because isl-rs's wrappers expose their pointer as a public `usize` (so
//! they are `Send`) and have a callable `free` beside a freeing `Drop`. Its integers are imath-32
//! (values that fit in 32 bits unboxed, several times faster than isl-rs's plain imath), chosen by
//! the autoconf site file `.cargo/isl-config.site` that the workspace's `.cargo/config.toml` gives
//! ISL's configure; a test below checks it.

mod ast_build;
mod cpu_clock;
mod ctx;
mod ffi;
mod flow;
mod map;
mod rows;
mod schedule;
mod set;
mod tile_ops;

// Link the static ISL that isl-rs builds; none of its Rust items are used.
use isl_rs as _;

pub use ast_build::{AstBuild, AstExpr, AstExprView, AstNode, AstNodeView, AstOp};
pub use cpu_clock::{this_thread_cpu_time, CpuGroup, ThreadCpuClock};
pub use ctx::{Ctx, ScheduleOption};
pub use flow::AccessInfo;
pub use map::{Map, Side, UnionMap};
pub use rows::Rows;
pub use schedule::{NodeKind, Schedule, ScheduleConstraints, ScheduleNode};
pub use set::{Set, UnionSet};

use crate::{Error, Result};
use std::ffi::{CStr, CString};
use std::os::raw::c_char;

/// Defines an owning wrapper `$name<'c>` around `*mut ffi::$raw`, with `Clone` = `$copy` and
/// `Drop` = `$free`.
macro_rules! isl_object {
    ($(#[$doc:meta])* $name:ident, $raw:ident, $copy:ident, $free:ident) => {
        $(#[$doc])*
        pub struct $name<'c> {
            raw: std::ptr::NonNull<crate::isl::ffi::$raw>,
            ctx: &'c crate::isl::Ctx,
        }

        #[allow(dead_code)]
        impl<'c> $name<'c> {
            /// Takes ownership of an object ISL gave; NULL becomes ISL's last error.
            pub(in crate::isl) fn from_raw(
                ctx: &'c crate::isl::Ctx,
                raw: *mut crate::isl::ffi::$raw,
            ) -> crate::Result<Self> {
                match std::ptr::NonNull::new(raw) {
                    Some(raw) => Ok($name { raw, ctx }),
                    None => Err(ctx.take_error()),
                }
            }

            /// Gives the object to an ISL function that takes it.
            pub(in crate::isl) fn into_raw(self) -> *mut crate::isl::ffi::$raw {
                let raw = self.raw.as_ptr();
                std::mem::forget(self);
                raw
            }

            /// Lends the object to an ISL function that keeps it.
            pub(in crate::isl) fn as_raw(&self) -> *mut crate::isl::ffi::$raw {
                self.raw.as_ptr()
            }

            /// The context the object belongs to.
            pub fn ctx(&self) -> &'c crate::isl::Ctx {
                self.ctx
            }
        }

        impl Clone for $name<'_> {
            fn clone(&self) -> Self {
                // SAFETY: `self.raw` is a live object; the copy function only increments its
                // reference count and returns the same non-NULL pointer, now owned once more.
                let raw = unsafe { crate::isl::ffi::$copy(self.raw.as_ptr()) };
                let raw = std::ptr::NonNull::new(raw)
                    .expect(concat!(stringify!($copy), " of a live object returns it"));
                $name { raw, ctx: self.ctx }
            }
        }

        impl Drop for $name<'_> {
            fn drop(&mut self) {
                // SAFETY: this wrapper owns one reference to `self.raw` and releases it exactly once.
                unsafe {
                    crate::isl::ffi::$free(self.raw.as_ptr());
                }
            }
        }
    };
}
pub(crate) use isl_object;

/// Converts a string ISL gave (`__isl_give char *`, allocated with `malloc`) and frees it.
fn take_c_string(ctx: &Ctx, raw: *mut c_char) -> Result<String> {
    if raw.is_null() {
        return Err(ctx.take_error());
    }
    // SAFETY: `raw` is a non-NULL, NUL-terminated string that ISL allocated for us.
    let text = unsafe { CStr::from_ptr(raw) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: ISL allocated `raw` with malloc and gave it to us; it is freed exactly once.
    unsafe { libc::free(raw.cast()) };
    Ok(text)
}

/// Copies a string that ISL lends (owned by an ISL object, not to be freed).
fn borrowed_c_string(raw: *const c_char) -> Option<String> {
    if raw.is_null() {
        return None;
    }
    // SAFETY: `raw` is a non-NULL, NUL-terminated string kept alive by the object that lent it,
    // which the caller still holds.
    Some(
        unsafe { CStr::from_ptr(raw) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// A Rust string as a C string for ISL's parsers.
fn c_string(text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::Isl(format!("ISL text contains a NUL byte: {text:?}")))
}

/// Interprets an `isl_bool`: -1 is ISL's last error.
fn check_bool(ctx: &Ctx, value: ffi::isl_bool) -> Result<bool> {
    match value {
        0 => Ok(false),
        v if v > 0 => Ok(true),
        _ => Err(ctx.take_error()),
    }
}

/// Interprets an `isl_size`: -1 is ISL's last error.
fn check_size(ctx: &Ctx, value: ffi::isl_size) -> Result<usize> {
    usize::try_from(value).map_err(|_| ctx.take_error())
}

/// Interprets an `isl_stat`: -1 is ISL's last error.
fn check_stat(ctx: &Ctx, value: ffi::isl_stat) -> Result<()> {
    if value < 0 {
        Err(ctx.take_error())
    } else {
        Ok(())
    }
}

/// Reads and frees a value ISL gave: `Some` if it is an integer that fits `i64`.
fn take_int_val(ctx: &Ctx, val: *mut ffi::isl_val) -> Result<Option<i64>> {
    if val.is_null() {
        return Err(ctx.take_error());
    }
    // SAFETY: `val` is a live value (keep).
    let is_int = check_bool(ctx, unsafe { ffi::isl_val_is_int(val) });
    // SAFETY: `val` is a live value (keep); the numerator of an integer is the integer.
    let num = unsafe { ffi::isl_val_get_num_si(val) };
    // SAFETY: `val` is owned and freed once.
    unsafe { ffi::isl_val_free(val) };
    Ok(if is_int? { Some(num) } else { None })
}

/// A count or position as ISL's `int`.
fn to_c_int(value: usize) -> Result<std::os::raw::c_int> {
    std::os::raw::c_int::try_from(value)
        .map_err(|_| Error::Isl(format!("{value} does not fit ISL's int")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_error_is_an_error_and_the_context_stays_usable() {
        let ctx = Ctx::new().unwrap();
        match UnionSet::read(&ctx, "{ S0[i] : 0 <= i < }") {
            Err(Error::Isl(msg)) => assert!(msg.contains("syntax error"), "{msg}"),
            Err(other) => panic!("unexpected error {other}"),
            Ok(_) => panic!("a malformed set parsed"),
        }
        let set = UnionSet::read(&ctx, "[n] -> { S0[i] : 0 <= i < n }").unwrap();
        assert!(!set.is_empty().unwrap());
    }

    #[test]
    fn clones_share_the_object_and_are_freed_independently() {
        let ctx = Ctx::new().unwrap();
        let a = UnionMap::read(&ctx, "{ S0[i] -> S0[i + 1] : 0 <= i < 10 }").unwrap();
        let b = a.clone();
        let domain = a.domain().unwrap();
        assert!(domain
            .is_equal(&UnionSet::read(&ctx, "{ S0[i] : 0 <= i < 10 }").unwrap())
            .unwrap());
        assert_eq!(b.maps().unwrap().len(), 1);
        assert!(b.is_single_valued().unwrap());
    }

    /// ISL was configured with imath-32 (`.cargo/isl-config.site`): its small-integer functions
    /// exist and keep a small value unboxed. Built with plain imath, this test does not link
    /// (`undefined reference to isl_sioimath_...`); a `target/` whose ISL predates the site file
    /// needs `cargo clean -p isl-rs` once.
    #[test]
    fn isl_uses_small_integers() {
        extern "C" {
            fn isl_sioimath_encode_small(value: i32) -> u64;
            fn isl_sioimath_is_small(value: u64) -> std::os::raw::c_int;
            fn isl_sioimath_get_small(value: u64) -> i32;
        }
        for value in [0, 42, -7, i32::MAX, i32::MIN] {
            // SAFETY: the small encoding is a plain integer: nothing is allocated or freed.
            let (small, back) = unsafe {
                let encoded = isl_sioimath_encode_small(value);
                (
                    isl_sioimath_is_small(encoded),
                    isl_sioimath_get_small(encoded),
                )
            };
            assert_eq!((small, back), (1, value));
        }
    }

    #[test]
    fn operation_budget_stops_isl_and_is_reported() {
        let ctx = Ctx::new().unwrap();
        ctx.set_max_operations(1);
        assert!(UnionSet::read(&ctx, "[n] -> { S0[i, j] : 0 <= i < n and 0 <= j < i }").is_err());
        assert!(ctx.quota_hit());
        ctx.set_max_operations(0);
        assert!(ctx.quota_hit(), "lifting the budget keeps its failure");
        assert!(UnionSet::read(&ctx, "{ S0[i] : 0 <= i < 4 }").is_ok());
        ctx.set_max_operations(1_000_000);
        assert!(
            !ctx.quota_hit(),
            "a new budget starts without the old one's failure"
        );
    }

    #[test]
    fn text_read_again_is_the_object_read_before_and_stays_unchanged_by_its_uses() {
        let ctx = Ctx::new().unwrap();
        let text = "[n] -> { S0[i] -> S0[i + 1] : 0 <= i < n }";
        let first = UnionMap::read(&ctx, text).unwrap();
        let again = UnionMap::read(&ctx, text).unwrap();
        assert_eq!(
            first.as_raw(),
            again.as_raw(),
            "the second read is the memoized object"
        );
        // An operation that takes a copy leaves the memoized object as it was (copy on write).
        let cut = first
            .intersect_domain(UnionSet::read(&ctx, "{ S0[i] : i < 3 }").unwrap())
            .unwrap();
        let third = UnionMap::read(&ctx, text).unwrap();
        assert!(third.is_equal(&again).unwrap());
        assert!(!third.is_equal(&cut).unwrap());
        // The same text as another kind is parsed as that kind; a text that does not parse is an
        // error each time it is read.
        let set_text = "[n] -> { S0[i] : 0 <= i < n }";
        assert!(UnionSet::read(&ctx, set_text)
            .unwrap()
            .is_equal(&third.domain().unwrap())
            .unwrap());
        assert_eq!(
            Set::read(&ctx, set_text).unwrap().to_str().unwrap(),
            set_text
        );
        for _ in 0..2 {
            assert!(UnionMap::read(&ctx, "{ S0[i] -> }").is_err());
        }
    }

    #[test]
    fn the_shared_context_is_one_per_thread() {
        let here = Ctx::shared().unwrap() as *const Ctx;
        assert_eq!(Ctx::shared().unwrap() as *const Ctx, here);
        let there = std::thread::spawn(|| Ctx::shared().unwrap() as *const Ctx as usize)
            .join()
            .unwrap();
        assert_ne!(there, here as usize);
        // Objects of the shared context are read once per thread too.
        let ctx = Ctx::shared().unwrap();
        let text = "{ S0[i] : 0 <= i < 7 }";
        assert_eq!(
            UnionSet::read(ctx, text).unwrap().as_raw(),
            UnionSet::read(ctx, text).unwrap().as_raw()
        );
    }

    #[test]
    fn ast_of_a_simple_loop() {
        let ctx = Ctx::new().unwrap();
        let build = AstBuild::from_context(Set::read(&ctx, "[n] -> { : n >= 0 }").unwrap())
            .unwrap()
            .set_iterators(&["c0".to_string()])
            .unwrap();
        let node = build
            .node_from_schedule_map(
                UnionMap::read(&ctx, "[n] -> { S0[i] -> [i] : 0 <= i < n }").unwrap(),
            )
            .unwrap();
        match node.view().unwrap() {
            AstNodeView::For { iterator, body, .. } => {
                assert!(matches!(iterator.view().unwrap(), AstExprView::Id(name) if name == "c0"));
                assert!(matches!(body.view().unwrap(), AstNodeView::User(_)));
            }
            _ => panic!("expected a for loop"),
        };
    }
}
