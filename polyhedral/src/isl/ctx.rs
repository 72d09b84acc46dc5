//! The ISL context: owns the `isl_ctx`, its options, its operation budget and its last error.

use super::{borrowed_c_string, check_stat, ffi};
use crate::{Error, Result};
use std::cell::Cell;
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
    _not_send: PhantomData<*mut ()>,
}

impl Ctx {
    /// A fresh context whose errors come back as `Err` (ISL's `on_error = continue`).
    pub fn new() -> Result<Ctx> {
        // SAFETY: isl_ctx_alloc has no preconditions; NULL is handled below.
        let raw = unsafe { ffi::isl_ctx_alloc() };
        let raw = NonNull::new(raw).ok_or_else(|| Error::Isl("cannot allocate an ISL context".into()))?;
        let ctx = Ctx { raw, quota_hit: Cell::new(false), _not_send: PhantomData };
        // SAFETY: `ctx.raw` is a live context.
        let stat = unsafe { ffi::isl_options_set_on_error(ctx.as_raw(), ffi::ISL_ON_ERROR_CONTINUE) };
        check_stat(&ctx, stat)?;
        Ok(ctx)
    }

    pub(super) fn as_raw(&self) -> *mut ffi::isl_ctx {
        self.raw.as_ptr()
    }

    /// Bounds the number of ISL operations from now on (0: unbounded); past the bound ISL calls
    /// fail and [`Ctx::quota_hit`] becomes true.
    pub fn set_max_operations(&self, max_operations: u64) {
        let max = std::os::raw::c_ulong::try_from(max_operations).unwrap_or(std::os::raw::c_ulong::MAX);
        // SAFETY: `self.raw` is a live context; both calls only update counters.
        unsafe {
            ffi::isl_ctx_set_max_operations(self.as_raw(), max);
            ffi::isl_ctx_reset_operations(self.as_raw());
        }
    }

    /// Whether an ISL call of this context has failed because the budget of
    /// [`Ctx::set_max_operations`] ran out (sticky for the context's life).
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
            (ffi::ISL_ERROR_NONE, _) | (_, None) => "ISL call failed without an error message".to_string(),
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
        let option = if value { "--schedule-parametric" } else { "--no-schedule-parametric" };
        let mut args: Vec<std::ffi::CString> = Vec::new();
        for a in ["tiledflow", option] {
            args.push(std::ffi::CString::new(a).map_err(|_| crate::Error::Isl("NUL in an option".into()))?);
        }
        let mut argv: Vec<*mut std::os::raw::c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
        // SAFETY: the context is live; `argv` holds two NUL-terminated strings that outlive the
        // call. ISL reads them and may reorder the pointers in `argv` (not the strings); with
        // ISL_ARG_SKIP_HELP and a known option it neither prints nor exits.
        let left = unsafe { ffi::isl_ctx_parse_options(self.as_raw(), 2, argv.as_mut_ptr(), ffi::ISL_ARG_SKIP_HELP) };
        if left == 1 {
            Ok(())
        } else {
            Err(crate::Error::Isl(format!("ISL did not take the option {option}")))
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
        // SAFETY: every object of this context borrowed it and has been dropped already
        // (the borrow checker ensures it), so the context is freed last and exactly once.
        unsafe { ffi::isl_ctx_free(self.as_raw()) };
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
