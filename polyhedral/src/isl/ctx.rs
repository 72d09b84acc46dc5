//! The ISL context: owns the `isl_ctx`, its options, its operation budget, its last error and the
//! memo of the text it has parsed.
//!
//! Stages exchange ISL text (the crate's boundary is plain data), so a later stage reads again the
//! domains, accesses, dependences and schedules that an earlier one read or printed. Every context
//! therefore keeps the objects it parsed, by kind and text: reading the same text again is a
//! reference-count increment instead of a parse (the memo is bounded, see [`MEMO_TEXT_BYTES`]). And
//! the stages share one context per thread ([`Ctx::shared`]), so the memo serves the whole
//! pipeline. A memoized object is the very object the text parses to, shared the way ISL shares
//! copies (copy on write), so results do not depend on whether a text was read before.

use super::{borrowed_c_string, c_string, check_stat, ffi};
use crate::{Error, Result};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::ptr::NonNull;

/// An ISL context. Every ISL object borrows the context it was made in.
///
/// Not `Send`/`Sync`: ISL contexts are single-threaded.
pub struct Ctx {
    raw: NonNull<ffi::isl_ctx>,
    /// Set when an ISL call failed because the operation budget ran out.
    quota_hit: Cell<bool>,
    /// The objects parsed in this context (see the module documentation).
    memo: RefCell<Memo>,
    _not_send: PhantomData<*mut ()>,
}

impl Ctx {
    /// A fresh context whose errors come back as `Err` (ISL's `on_error = continue`).
    pub fn new() -> Result<Ctx> {
        // SAFETY: isl_ctx_alloc has no preconditions; NULL is handled below.
        let raw = unsafe { ffi::isl_ctx_alloc() };
        let raw =
            NonNull::new(raw).ok_or_else(|| Error::Isl("cannot allocate an ISL context".into()))?;
        let ctx = Ctx {
            raw,
            quota_hit: Cell::new(false),
            memo: RefCell::default(),
            _not_send: PhantomData,
        };
        // SAFETY: `ctx.raw` is a live context.
        let stat =
            unsafe { ffi::isl_options_set_on_error(ctx.as_raw(), ffi::ISL_ON_ERROR_CONTINUE) };
        check_stat(&ctx, stat)?;
        Ok(ctx)
    }

    /// This thread's shared context, made on first use, for the stages of the pipeline (see the
    /// module documentation), with the options of [`Ctx::new`]. A stage sets the options it relies
    /// on each time it runs (so [`schedule`](crate::schedule) sets its tiling options, which no
    /// other stage uses), and one that sets an operation budget lifts it afterwards
    /// ([`Ctx::set_max_operations`] with 0).
    ///
    /// The context lives as long as the program (one per thread that asks; a thread that ends
    /// frees the objects of its memo), so the objects made in it may be kept anywhere on the thread.
    pub fn shared() -> Result<&'static Ctx> {
        thread_local! {
            static SHARED: SharedSlot = const { SharedSlot(Cell::new(None)) };
        }
        let made = SHARED.try_with(|slot| -> Result<&'static Ctx> {
            if let Some(ctx) = slot.0.get() {
                return Ok(ctx);
            }
            let ctx: &'static Ctx = Box::leak(Box::new(Ctx::new()?));
            slot.0.set(Some(ctx));
            Ok(ctx)
        });
        made.unwrap_or_else(|_| {
            Err(Error::Isl(
                "no ISL context for a thread that is ending".into(),
            ))
        })
    }

    /// The object that `text` parses to, as an owned raw pointer of `kind`'s type: from the memo
    /// when this context has parsed the same text as the same kind before, else parsed and kept.
    pub(super) fn read(&self, kind: Kind, text: &str) -> Result<*mut c_void> {
        if let Some(&raw) = self.memo.borrow().objects[kind as usize].get(text) {
            // SAFETY: the memo owns a live object of `kind`; the copy is a new reference for the caller.
            return Ok(unsafe { kind.copy(raw) });
        }
        let c_text = c_string(text)?;
        // SAFETY: the context is live and `c_text` a NUL-terminated string that ISL only reads.
        let raw = unsafe { kind.parse(self.as_raw(), c_text.as_ptr()) };
        if raw.is_null() {
            return Err(self.take_error());
        }
        let mut memo = self.memo.borrow_mut();
        if memo.text_bytes + text.len() > MEMO_TEXT_BYTES {
            memo.clear();
        }
        memo.text_bytes += text.len();
        // SAFETY: `raw` is a live object of `kind` that we own; the memo keeps one more reference.
        memo.objects[kind as usize].insert(text.to_string(), unsafe { kind.copy(raw) });
        Ok(raw)
    }

    pub(super) fn as_raw(&self) -> *mut ffi::isl_ctx {
        self.raw.as_ptr()
    }

    /// Bounds the number of ISL operations from now on (0: unbounded); past the bound ISL calls
    /// fail and [`Ctx::quota_hit`] becomes true.
    pub fn set_max_operations(&self, max_operations: u64) {
        if max_operations != 0 {
            self.quota_hit.set(false);
        }
        let max =
            std::os::raw::c_ulong::try_from(max_operations).unwrap_or(std::os::raw::c_ulong::MAX);
        // SAFETY: `self.raw` is a live context; both calls only update counters.
        unsafe {
            ffi::isl_ctx_set_max_operations(self.as_raw(), max);
            ffi::isl_ctx_reset_operations(self.as_raw());
        }
    }

    /// Whether an ISL call of this context has failed because the budget of
    /// [`Ctx::set_max_operations`] ran out (sticky until the next budget is set: lifting one, with 0, keeps it).
    pub fn quota_hit(&self) -> bool {
        self.quota_hit.get()
    }

    /// ISL's last error as our error, and clears it. Called right after a failed ISL call.
    pub(super) fn take_error(&self) -> Error {
        // SAFETY: `self.raw` is a live context; the strings it returns are owned by the context
        // and copied before the error is reset.
        let (kind, msg, file, line) = unsafe {
            let ctx = self.as_raw();
            (
                ffi::isl_ctx_last_error(ctx),
                borrowed_c_string(ffi::isl_ctx_last_error_msg(ctx)),
                borrowed_c_string(ffi::isl_ctx_last_error_file(ctx)),
                ffi::isl_ctx_last_error_line(ctx),
            )
        };
        // SAFETY: `self.raw` is a live context.
        unsafe { ffi::isl_ctx_reset_error(self.as_raw()) };
        if kind == ffi::ISL_ERROR_QUOTA {
            self.quota_hit.set(true);
        }
        let msg = match (kind, msg) {
            (ffi::ISL_ERROR_NONE, _) | (_, None) => {
                "ISL call failed without an error message".to_string()
            }
            (_, Some(msg)) => msg,
        };
        match file {
            Some(file) => Error::Isl(format!("{msg} ({}:{line})", short_path(&file))),
            None => Error::Isl(msg),
        }
    }

    fn set_option(
        &self,
        setter: unsafe extern "C" fn(*mut ffi::isl_ctx, c_int) -> ffi::isl_stat,
        value: bool,
    ) -> Result<()> {
        // SAFETY: `setter` is one of ISL's `isl_options_set_*` functions, which take a live
        // context and an int.
        let stat = unsafe { setter(self.as_raw(), c_int::from(value)) };
        check_stat(self, stat)
    }

    /// `schedule_outer_coincidence`: the outermost member of each band must be coincident.
    pub fn set_schedule_outer_coincidence(&self, value: bool) -> Result<()> {
        self.set_option(ffi::isl_options_set_schedule_outer_coincidence, value)
    }

    /// `schedule_serialize_sccs`: every strongly connected component gets its own nest.
    pub fn set_schedule_serialize_sccs(&self, value: bool) -> Result<()> {
        self.set_option(ffi::isl_options_set_schedule_serialize_sccs, value)
    }

    /// `schedule_whole_component`: schedule each weakly connected component as a whole.
    pub fn set_schedule_whole_component(&self, value: bool) -> Result<()> {
        self.set_option(ffi::isl_options_set_schedule_whole_component, value)
    }

    /// `schedule_parametric`: whether schedule rows may have parameter coefficients (ISL's
    /// default). ISL has no setter for it, so it is set as ISL's command line would
    /// (`--no-schedule-parametric`).
    pub fn set_schedule_parametric(&self, value: bool) -> Result<()> {
        let option = if value {
            "--schedule-parametric"
        } else {
            "--no-schedule-parametric"
        };
        let mut args: Vec<std::ffi::CString> = Vec::new();
        for a in ["tiledflow", option] {
            args.push(
                std::ffi::CString::new(a)
                    .map_err(|_| crate::Error::Isl("NUL in an option".into()))?,
            );
        }
        let mut argv: Vec<*mut std::os::raw::c_char> =
            args.iter().map(|a| a.as_ptr().cast_mut()).collect();
        // SAFETY: the context is live; `argv` holds two NUL-terminated strings that outlive the
        // call. ISL reads them and may reorder the pointers in `argv` (not the strings); with
        // ISL_ARG_SKIP_HELP and a known option it neither prints nor exits.
        let left = unsafe {
            ffi::isl_ctx_parse_options(self.as_raw(), 2, argv.as_mut_ptr(), ffi::ISL_ARG_SKIP_HELP)
        };
        if left == 1 {
            Ok(())
        } else {
            Err(crate::Error::Isl(format!(
                "ISL did not take the option {option}"
            )))
        }
    }

    /// An integer-valued scheduler option (see [`ScheduleOption`]); `-1` means unbounded for the
    /// bounds.
    pub fn set_schedule_option(&self, option: ScheduleOption, value: i32) -> Result<()> {
        let setter: unsafe extern "C" fn(*mut ffi::isl_ctx, c_int) -> ffi::isl_stat = match option {
            ScheduleOption::MaxCoefficient => ffi::isl_options_set_schedule_max_coefficient,
            ScheduleOption::MaxConstantTerm => ffi::isl_options_set_schedule_max_constant_term,
        };
        // SAFETY: `setter` is one of ISL's `isl_options_set_*` functions, which take a live
        // context and an int.
        let stat = unsafe { setter(self.as_raw(), c_int::from(value)) };
        check_stat(self, stat)
    }

    /// `tile_scale_tile_loops`: tile loops count in points (`32 * floor(i/32)`) instead of tiles.
    pub fn set_tile_scale_tile_loops(&self, value: bool) -> Result<()> {
        self.set_option(ffi::isl_options_set_tile_scale_tile_loops, value)
    }

    /// `tile_shift_point_loops`: point loops start at 0 in each tile instead of at `i`.
    pub fn set_tile_shift_point_loops(&self, value: bool) -> Result<()> {
        self.set_option(ffi::isl_options_set_tile_shift_point_loops, value)
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        self.memo.get_mut().clear();
        // SAFETY: every object of this context borrowed it and has been dropped already
        // (the borrow checker ensures it), and the memo's objects were freed just above, so the
        // context is freed last and exactly once.
        unsafe { ffi::isl_ctx_free(self.as_raw()) };
    }
}

/// The slot of a thread's shared context ([`Ctx::shared`]). The context is never freed (an object
/// made in it may sit in another thread-local value that is dropped later); the thread's end frees
/// the objects of its memo, which nothing else refers to.
struct SharedSlot(Cell<Option<&'static Ctx>>);

impl Drop for SharedSlot {
    fn drop(&mut self) {
        if let Some(ctx) = self.0.get() {
            ctx.memo.borrow_mut().clear();
        }
    }
}

/// The most text a context's memo keeps (the sum of the parsed texts' lengths); past it the memo
/// starts over. A compile reads a few hundred kilobytes at most.
const MEMO_TEXT_BYTES: usize = 32 << 20;

/// The kinds of object the memo keeps, one table each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Set,
    UnionSet,
    Map,
    UnionMap,
    Schedule,
}

impl Kind {
    const ALL: usize = 5;

    /// Parses `text` as this kind (ISL's `*_read_from_str`).
    ///
    /// # Safety
    /// `ctx` is a live context and `text` a NUL-terminated string.
    unsafe fn parse(
        self,
        ctx: *mut ffi::isl_ctx,
        text: *const std::os::raw::c_char,
    ) -> *mut c_void {
        // SAFETY: as the caller promises.
        unsafe {
            match self {
                Kind::Set => ffi::isl_set_read_from_str(ctx, text).cast(),
                Kind::UnionSet => ffi::isl_union_set_read_from_str(ctx, text).cast(),
                Kind::Map => ffi::isl_map_read_from_str(ctx, text).cast(),
                Kind::UnionMap => ffi::isl_union_map_read_from_str(ctx, text).cast(),
                Kind::Schedule => ffi::isl_schedule_read_from_str(ctx, text).cast(),
            }
        }
    }

    /// One more reference to `raw` (ISL's `*_copy`).
    ///
    /// # Safety
    /// `raw` is a live object of this kind.
    unsafe fn copy(self, raw: *mut c_void) -> *mut c_void {
        // SAFETY: as the caller promises.
        unsafe {
            match self {
                Kind::Set => ffi::isl_set_copy(raw.cast()).cast(),
                Kind::UnionSet => ffi::isl_union_set_copy(raw.cast()).cast(),
                Kind::Map => ffi::isl_map_copy(raw.cast()).cast(),
                Kind::UnionMap => ffi::isl_union_map_copy(raw.cast()).cast(),
                Kind::Schedule => ffi::isl_schedule_copy(raw.cast()).cast(),
            }
        }
    }

    /// Releases one reference to `raw` (ISL's `*_free`).
    ///
    /// # Safety
    /// `raw` is a live object of this kind whose reference the caller owns.
    unsafe fn free(self, raw: *mut c_void) {
        // SAFETY: as the caller promises. ISL's `*_free` returns NULL.
        unsafe {
            match self {
                Kind::Set => _ = ffi::isl_set_free(raw.cast()),
                Kind::UnionSet => _ = ffi::isl_union_set_free(raw.cast()),
                Kind::Map => _ = ffi::isl_map_free(raw.cast()),
                Kind::UnionMap => _ = ffi::isl_union_map_free(raw.cast()),
                Kind::Schedule => _ = ffi::isl_schedule_free(raw.cast()),
            }
        }
    }
}

/// A context's parsed objects: per kind, text to one owned reference.
#[derive(Default)]
struct Memo {
    objects: [HashMap<String, *mut c_void>; Kind::ALL],
    text_bytes: usize,
}

impl Memo {
    fn clear(&mut self) {
        for (table, kind) in self.objects.iter_mut().zip([
            Kind::Set,
            Kind::UnionSet,
            Kind::Map,
            Kind::UnionMap,
            Kind::Schedule,
        ]) {
            for (_, raw) in table.drain() {
                // SAFETY: the memo owns one reference to each of its objects, released once here.
                unsafe { kind.free(raw) };
            }
        }
        self.text_bytes = 0;
    }
}

/// The file name of an ISL source path, for compact error messages.
fn short_path(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Integer options of ISL's scheduler (`isl_options_set_schedule_*`, see ISL's manual).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduleOption {
    /// Largest schedule coefficient of an iterator (or parameter), `-1`: no bound.
    MaxCoefficient,
    /// Largest constant term of a schedule, `-1`: no bound.
    MaxConstantTerm,
}
