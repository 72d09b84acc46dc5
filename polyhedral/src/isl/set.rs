//! Sets (`isl_set`, one space) and union sets (`isl_union_set`, any number of spaces).

use super::ctx::Kind;
use super::{
    borrowed_c_string, check_bool, check_size, ffi, isl_object, take_c_string, take_int_val, Ctx,
};
use crate::Result;

isl_object!(
    /// An `isl_set`: integer points of one space, possibly with parameters.
    Set, isl_set, isl_set_copy, isl_set_free
);

isl_object!(
    /// An `isl_union_set`: a union of sets in different spaces.
    UnionSet, isl_union_set, isl_union_set_copy, isl_union_set_free
);

impl<'c> Set<'c> {
    /// Parses ISL text, e.g. `[n] -> { S0[i] : 0 <= i < n }` or a parameter set `[n] -> { : n > 0 }`.
    pub fn read(ctx: &'c Ctx, text: &str) -> Result<Self> {
        Set::from_raw(ctx, ctx.read(Kind::Set, text)?.cast())
    }

    /// The set as ISL text.
    pub fn to_str(&self) -> Result<String> {
        // SAFETY: `self` is live (keep); the result is a malloc'd string we own.
        let raw = unsafe { ffi::isl_set_to_str(self.as_raw()) };
        take_c_string(self.ctx, raw)
    }

    pub fn intersect(self, other: Set<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_set_intersect(self.into_raw(), other.into_raw()) };
        Set::from_raw(ctx, raw)
    }

    pub fn subtract(self, other: Set<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_set_subtract(self.into_raw(), other.into_raw()) };
        Set::from_raw(ctx, raw)
    }

    /// The same set with its existentially quantified variables expressed as integer divisions
    /// of the others (what `subtract` computes of its second argument on every call).
    pub fn compute_divs(self) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_set_compute_divs(self.into_raw()) };
        Set::from_raw(ctx, raw)
    }

    /// Eliminates the parameters: the points that are in the set for some parameter values.
    pub fn project_out_params(self) -> Result<Self> {
        let ctx = self.ctx;
        let n = self.param_names()?.len();
        let n = u32::try_from(n)
            .map_err(|_| crate::Error::Isl(format!("{n} parameters is too many")))?;
        // SAFETY: `self` is given to ISL (take); the range covers all parameters; the result is owned.
        let raw = unsafe { ffi::isl_set_project_out(self.into_raw(), ffi::ISL_DIM_PARAM, 0, n) };
        Set::from_raw(ctx, raw)
    }

    /// The lexicographically smallest point (for each parameter value).
    pub fn lexmin(self) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_set_lexmin(self.into_raw()) };
        Set::from_raw(ctx, raw)
    }

    /// A parameter set as a (zero-dimensional) set.
    pub fn params_to_set(self) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_set_from_params(self.into_raw()) };
        Set::from_raw(ctx, raw)
    }

    /// Whether the set is bounded (for every parameter value).
    pub fn is_bounded(&self) -> Result<bool> {
        // SAFETY: `self` is live (keep).
        let b = unsafe { ffi::isl_set_is_bounded(self.as_raw()) };
        check_bool(self.ctx, b)
    }

    pub fn is_empty(&self) -> Result<bool> {
        // SAFETY: `self` is live (keep).
        let b = unsafe { ffi::isl_set_is_empty(self.as_raw()) };
        check_bool(self.ctx, b)
    }

    /// The value of dimension `pos` if the constraints fix it to an integer constant (a syntactic
    /// check), `None` otherwise.
    // Used by tests only since `few_offsets` scans points (kept as their oracle).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn plain_fixed(&self, pos: usize) -> Result<Option<i64>> {
        let pos = u32::try_from(pos)
            .map_err(|_| crate::Error::Isl(format!("dimension {pos} is too large")))?;
        // SAFETY: `self` is live (keep); the value is owned and freed below.
        let val =
            unsafe { ffi::isl_set_plain_get_val_if_fixed(self.as_raw(), ffi::ISL_DIM_SET, pos) };
        take_int_val(self.ctx, val)
    }

    /// The smallest and largest values of dimension `pos` over the set's points (whatever the
    /// parameters and the other dimensions); `None` when the set is empty or unbounded there.
    pub fn dim_range(&self, pos: usize) -> Result<Option<(i64, i64)>> {
        let pos = std::ffi::c_int::try_from(pos)
            .map_err(|_| crate::Error::Isl(format!("dimension {pos} is too large")))?;
        // SAFETY: a copy of `self` is given to ISL (take); the value is owned and freed by take_int_val.
        let min = unsafe { ffi::isl_set_dim_min_val(self.clone().into_raw(), pos) };
        let min = take_int_val(self.ctx, min)?;
        // SAFETY: as above.
        let max = unsafe { ffi::isl_set_dim_max_val(self.clone().into_raw(), pos) };
        let max = take_int_val(self.ctx, max)?;
        Ok(min.zip(max))
    }

    /// The name of the set's tuple (`S0` in `{ S0[i] }`), if it has one.
    pub fn tuple_name(&self) -> Option<String> {
        // SAFETY: `self` is live (keep); the name is owned by the set, copied at once.
        borrowed_c_string(unsafe { ffi::isl_set_get_tuple_name(self.as_raw()) })
    }

    /// The number of set dimensions.
    pub fn n_dims(&self) -> Result<usize> {
        // SAFETY: `self` is live (keep).
        let n = unsafe { ffi::isl_set_dim(self.as_raw(), ffi::ISL_DIM_SET) };
        check_size(self.ctx, n)
    }

    /// The names of the parameters, in ISL's order.
    pub fn param_names(&self) -> Result<Vec<String>> {
        // SAFETY: `self` is live (keep).
        let n = check_size(self.ctx, unsafe {
            ffi::isl_set_dim(self.as_raw(), ffi::ISL_DIM_PARAM)
        })?;
        (0..n)
            .map(|pos| {
                let pos_raw = u32::try_from(pos)
                    .map_err(|_| crate::Error::Isl(format!("parameter {pos} is too large")))?;
                // SAFETY: `self` is live (keep) and `pos` < its number of parameters; the name is
                // owned by the set and copied at once.
                let name = borrowed_c_string(unsafe {
                    ffi::isl_set_get_dim_name(self.as_raw(), ffi::ISL_DIM_PARAM, pos_raw)
                });
                name.ok_or_else(|| crate::Error::Isl(format!("parameter {pos} has no name")))
            })
            .collect()
    }
}

impl<'c> UnionSet<'c> {
    /// Parses ISL text, e.g. `[n] -> { S0[i] : 0 <= i < n; S1[] }`.
    pub fn read(ctx: &'c Ctx, text: &str) -> Result<Self> {
        UnionSet::from_raw(ctx, ctx.read(Kind::UnionSet, text)?.cast())
    }

    /// The empty union set.
    pub fn empty(ctx: &'c Ctx) -> Result<Self> {
        // SAFETY: `ctx` is live; the result is owned.
        let raw = unsafe { ffi::isl_union_set_empty_ctx(ctx.as_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    pub fn from_set(set: Set<'c>) -> Result<Self> {
        let ctx = set.ctx;
        // SAFETY: `set` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_set_from_set(set.into_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    /// The union set as ISL text.
    pub fn to_str(&self) -> Result<String> {
        // SAFETY: `self` is live (keep); the result is a malloc'd string we own.
        let raw = unsafe { ffi::isl_union_set_to_str(self.as_raw()) };
        take_c_string(self.ctx, raw)
    }

    pub fn union(self, other: UnionSet<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_union_set_union(self.into_raw(), other.into_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    pub fn intersect(self, other: UnionSet<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_union_set_intersect(self.into_raw(), other.into_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    pub fn subtract(self, other: UnionSet<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_union_set_subtract(self.into_raw(), other.into_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    /// Restricts the parameters to the parameter set `params`.
    pub fn intersect_params(self, params: Set<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw =
            unsafe { ffi::isl_union_set_intersect_params(self.into_raw(), params.into_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    /// Projects out all set dimensions of every space, keeping the constraints on the parameters.
    pub fn params(self) -> Result<Set<'c>> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_set_params(self.into_raw()) };
        Set::from_raw(ctx, raw)
    }

    /// Simplifies the representation (same points).
    pub fn coalesce(self) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_set_coalesce(self.into_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    pub fn is_empty(&self) -> Result<bool> {
        // SAFETY: `self` is live (keep).
        let b = unsafe { ffi::isl_union_set_is_empty(self.as_raw()) };
        check_bool(self.ctx, b)
    }

    pub fn is_equal(&self, other: &UnionSet<'c>) -> Result<bool> {
        // SAFETY: both are live (keep, keep).
        let b = unsafe { ffi::isl_union_set_is_equal(self.as_raw(), other.as_raw()) };
        check_bool(self.ctx, b)
    }

    pub fn is_subset(&self, other: &UnionSet<'c>) -> Result<bool> {
        // SAFETY: both are live (keep, keep).
        let b = unsafe { ffi::isl_union_set_is_subset(self.as_raw(), other.as_raw()) };
        check_bool(self.ctx, b)
    }

    /// The sets of the union, one per space (in ISL's order).
    pub fn sets(&self) -> Result<Vec<Set<'c>>> {
        // SAFETY: `self` is live (keep); the list is owned and freed below.
        let list = unsafe { ffi::isl_union_set_get_set_list(self.as_raw()) };
        if list.is_null() {
            return Err(self.ctx.take_error());
        }
        let result = (|| {
            // SAFETY: `list` is a live list (keep).
            let n = check_size(self.ctx, unsafe { ffi::isl_set_list_size(list) })?;
            (0..n)
                .map(|k| {
                    // SAFETY: `list` is live and `k` < its size; the element is owned.
                    let raw = unsafe { ffi::isl_set_list_get_at(list, super::to_c_int(k)?) };
                    Set::from_raw(self.ctx, raw)
                })
                .collect()
        })();
        // SAFETY: the list is owned here and freed once; its elements were copied out.
        unsafe { ffi::isl_set_list_free(list) };
        result
    }
}

// Points of a set (taskgen, for `astgen::few_offsets`).

/// What [`Set::points_upto`]'s callback collects.
struct Points<'c> {
    ctx: &'c Ctx,
    n_dims: usize,
    max: usize,
    points: Vec<Vec<i64>>,
    /// Set when a point past `max` was met: the scan was stopped on purpose.
    too_many: bool,
    /// Set when a coordinate could not be read as an integer.
    failed: bool,
}

/// `isl_set_foreach_point`'s callback: records the point's coordinates, and stops the scan (an
/// error status) at the first point past `max`.
unsafe extern "C" fn collect_point(
    pnt: *mut ffi::isl_point,
    user: *mut std::os::raw::c_void,
) -> ffi::isl_stat {
    // SAFETY: `user` is the `Points` that `points_upto` lent for the duration of the scan, and
    // nothing else touches it meanwhile.
    let points = unsafe { &mut *user.cast::<Points<'_>>() };
    let mut point = Vec::with_capacity(points.n_dims);
    if points.points.len() == points.max {
        points.too_many = true;
    } else {
        for k in 0..points.n_dims {
            let Ok(pos) = super::to_c_int(k) else { break };
            // SAFETY: `pnt` is live (keep); the value is owned, and `take_int_val` frees it.
            let val = unsafe { ffi::isl_point_get_coordinate_val(pnt, ffi::ISL_DIM_SET, pos) };
            match take_int_val(points.ctx, val) {
                Ok(Some(v)) => point.push(v),
                _ => break,
            }
        }
        points.failed = point.len() != points.n_dims;
    }
    // SAFETY: the callback owns the point (take) and frees it once.
    unsafe { ffi::isl_point_free(pnt) };
    if points.too_many || points.failed {
        return -1;
    }
    points.points.push(point);
    0
}

impl<'c> Set<'c> {
    /// The integer points of a bounded set without parameters, in ISL's scanning order (not
    /// sorted), or `None` when it has more than `max`: the scan stops at the first point past
    /// `max`, so a large set costs no more than `max + 1` points.
    pub fn points_upto(&self, max: usize) -> Result<Option<Vec<Vec<i64>>>> {
        let mut points = Points {
            ctx: self.ctx,
            n_dims: self.n_dims()?,
            max,
            points: Vec::new(),
            too_many: false,
            failed: false,
        };
        // SAFETY: `self` is live (keep); `points` outlives the call and is only touched by the
        // callback while ISL runs it.
        let stat = unsafe {
            ffi::isl_set_foreach_point(self.as_raw(), Some(collect_point), (&raw mut points).cast())
        };
        if points.too_many {
            return Ok(None);
        }
        if points.failed {
            return Err(crate::Error::Isl(
                "a point of a set has a coordinate that is not an integer".into(),
            ));
        }
        super::check_stat(self.ctx, stat)?;
        Ok(Some(points.points))
    }
}

// Per statement pair dependence checks (`crate::verify`).
impl<'c> Set<'c> {
    pub fn is_subset(&self, other: &Set<'c>) -> Result<bool> {
        // SAFETY: both are live (keep, keep).
        let b = unsafe { ffi::isl_set_is_subset(self.as_raw(), other.as_raw()) };
        check_bool(self.ctx, b)
    }
}
