//! Maps (`isl_map`, one pair of spaces) and union maps (`isl_union_map`).

use super::ctx::Kind;
use super::set::{Set, UnionSet};
use super::{
    borrowed_c_string, check_bool, check_size, ffi, isl_object, take_c_string, take_int_val, Ctx,
};
use crate::{Error, Result};
use std::os::raw::{c_int, c_uint};

isl_object!(
    /// An `isl_map`: a relation between two spaces, possibly with parameters.
    Map, isl_map, isl_map_copy, isl_map_free
);

isl_object!(
    /// An `isl_union_map`: a union of maps between different pairs of spaces.
    UnionMap, isl_union_map, isl_union_map_copy, isl_union_map_free
);

/// Which side of a map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    In,
    Out,
}

impl Side {
    fn raw(self) -> c_int {
        match self {
            Side::In => ffi::ISL_DIM_IN,
            Side::Out => ffi::ISL_DIM_OUT,
        }
    }
}

impl<'c> Map<'c> {
    /// Parses ISL text, e.g. `[n] -> { S0[i] -> A[i + 1] }`.
    pub fn read(ctx: &'c Ctx, text: &str) -> Result<Self> {
        Map::from_raw(ctx, ctx.read(Kind::Map, text)?.cast())
    }

    /// The map as ISL text.
    pub fn to_str(&self) -> Result<String> {
        // SAFETY: `self` is live (keep); the result is a malloc'd string we own.
        let raw = unsafe { ffi::isl_map_to_str(self.as_raw()) };
        take_c_string(self.ctx, raw)
    }

    /// The number of input (`Side::In`) or output (`Side::Out`) dimensions.
    pub fn n_dims(&self, side: Side) -> Result<usize> {
        // SAFETY: `self` is live (keep).
        let n = unsafe { ffi::isl_map_dim(self.as_raw(), side.raw()) };
        check_size(self.ctx, n)
    }

    /// The tuple name of one side, if it has one.
    pub fn tuple_name(&self, side: Side) -> Option<String> {
        // SAFETY: `self` is live (keep); the name is owned by the map, copied at once.
        borrowed_c_string(unsafe { ffi::isl_map_get_tuple_name(self.as_raw(), side.raw()) })
    }

    /// Appends `n` output dimensions, each fixed to zero.
    pub fn pad_out_with_zeros(self, n: usize) -> Result<Self> {
        let ctx = self.ctx;
        let first = self.n_dims(Side::Out)?;
        let n_raw =
            c_uint::try_from(n).map_err(|_| Error::Isl(format!("{n} dimensions is too many")))?;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_map_add_dims(self.into_raw(), ffi::ISL_DIM_OUT, n_raw) };
        let mut map = Map::from_raw(ctx, raw)?;
        for pos in first..first + n {
            let pos = c_uint::try_from(pos)
                .map_err(|_| Error::Isl(format!("dimension {pos} is too large")))?;
            // SAFETY: `map` is given to ISL (take); `pos` is an output dimension; the result is owned.
            let raw = unsafe { ffi::isl_map_fix_si(map.into_raw(), ffi::ISL_DIM_OUT, pos, 0) };
            map = Map::from_raw(ctx, raw)?;
        }
        Ok(map)
    }

    /// Removes the name of one side's tuple (`S0[i] -> N0[t]` becomes `S0[i] -> [t]`).
    pub fn reset_tuple_id(self, side: Side) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_map_reset_tuple_id(self.into_raw(), side.raw()) };
        Map::from_raw(ctx, raw)
    }

    /// `{ y - x : (x -> y) in self }`; both sides must be the same space.
    pub fn deltas(self) -> Result<Set<'c>> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_map_deltas(self.into_raw()) };
        Set::from_raw(ctx, raw)
    }

    /// The value of output dimension `pos` if the constraints fix it to an integer constant
    /// (a syntactic check), `None` otherwise.
    pub fn plain_fixed_out(&self, pos: usize) -> Result<Option<i64>> {
        let pos_raw = c_uint::try_from(pos)
            .map_err(|_| Error::Isl(format!("dimension {pos} is too large")))?;
        // SAFETY: `self` is live (keep); the value is owned and handed to take_int_val.
        let val = unsafe {
            ffi::isl_map_plain_get_val_if_fixed(self.as_raw(), ffi::ISL_DIM_OUT, pos_raw)
        };
        take_int_val(self.ctx, val)
    }

    /// The disjuncts of the map, each as a map of one basic map, in ISL's order.
    pub fn basic_maps(&self) -> Result<Vec<Map<'c>>> {
        // SAFETY: `self` is live (keep); the list is owned and freed below.
        let list = unsafe { ffi::isl_map_get_basic_map_list(self.as_raw()) };
        if list.is_null() {
            return Err(self.ctx.take_error());
        }
        // SAFETY: `list` is live (keep).
        let n = check_size(self.ctx, unsafe { ffi::isl_basic_map_list_size(list) });
        let mut out = Vec::new();
        let mut result = Ok(());
        for k in 0..*n.as_ref().unwrap_or(&0) {
            let k = match super::to_c_int(k) {
                Ok(k) => k,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            // SAFETY: `list` is live and `k` in bounds; the basic map is owned and given to
            // isl_map_from_basic_map (take), whose result is owned.
            let raw =
                unsafe { ffi::isl_map_from_basic_map(ffi::isl_basic_map_list_get_at(list, k)) };
            match Map::from_raw(self.ctx, raw) {
                Ok(m) => out.push(m),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        // SAFETY: `list` is owned and freed once.
        unsafe { ffi::isl_basic_map_list_free(list) };
        n?;
        result.map(|()| out)
    }

    /// Whether every pair of `self` is in `other` (same spaces).
    pub fn is_subset(&self, other: &Map<'c>) -> Result<bool> {
        // SAFETY: both maps are live (keep, keep).
        check_bool(self.ctx, unsafe {
            ffi::isl_map_is_subset(self.as_raw(), other.as_raw())
        })
    }

    /// The union of two maps between the same spaces.
    pub fn union(self, other: Map<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both maps are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_map_union(self.into_raw(), other.into_raw()) };
        Map::from_raw(ctx, raw)
    }

    /// One element of the map (parameters included), as ISL text; for error reports.
    pub fn sample_str(self) -> Result<String> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the basic map is owned and freed below.
        let bmap = unsafe { ffi::isl_map_sample(self.into_raw()) };
        if bmap.is_null() {
            return Err(ctx.take_error());
        }
        // SAFETY: `bmap` is live (keep); the string is owned.
        let text = take_c_string(ctx, unsafe { ffi::isl_basic_map_to_str(bmap) });
        // SAFETY: `bmap` is owned and freed once.
        unsafe { ffi::isl_basic_map_free(bmap) };
        text
    }
}

impl<'c> UnionMap<'c> {
    /// Parses ISL text, e.g. `[n] -> { S0[i] -> [0, i, 0]; S1[] -> [1, 0, 0] }`.
    pub fn read(ctx: &'c Ctx, text: &str) -> Result<Self> {
        UnionMap::from_raw(ctx, ctx.read(Kind::UnionMap, text)?.cast())
    }

    /// The empty union map.
    pub fn empty(ctx: &'c Ctx) -> Result<Self> {
        // SAFETY: `ctx` is live; the result is owned.
        let raw = unsafe { ffi::isl_union_map_empty_ctx(ctx.as_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    pub fn from_map(map: Map<'c>) -> Result<Self> {
        let ctx = map.ctx;
        // SAFETY: `map` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_from_map(map.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    /// The union map as ISL text.
    pub fn to_str(&self) -> Result<String> {
        // SAFETY: `self` is live (keep); the result is a malloc'd string we own.
        let raw = unsafe { ffi::isl_union_map_to_str(self.as_raw()) };
        take_c_string(self.ctx, raw)
    }

    pub fn union(self, other: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_union(self.into_raw(), other.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    pub fn intersect(self, other: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_intersect(self.into_raw(), other.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    pub fn subtract(self, other: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_subtract(self.into_raw(), other.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    pub fn intersect_domain(self, domain: UnionSet<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe {
            ffi::isl_union_map_intersect_domain_union_set(self.into_raw(), domain.into_raw())
        };
        UnionMap::from_raw(ctx, raw)
    }

    pub fn intersect_range(self, range: UnionSet<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe {
            ffi::isl_union_map_intersect_range_union_set(self.into_raw(), range.into_raw())
        };
        UnionMap::from_raw(ctx, raw)
    }

    /// `{ x -> [y, z] : (x -> y) in self and (x -> z) in other }`, flattened.
    pub fn flat_range_product(self, other: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw =
            unsafe { ffi::isl_union_map_flat_range_product(self.into_raw(), other.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    /// `{ y -> x : (x -> y) in self }`.
    pub fn reverse(self) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_reverse(self.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    /// For each domain point, the lexicographically largest of its images (per space pair).
    pub fn lexmax(self) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_lexmax(self.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    /// `{ f(x) -> y : (x -> y) in self }` for `f` = `map`.
    pub fn apply_domain(self, map: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_apply_domain(self.into_raw(), map.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    /// `{ x -> f(y) : (x -> y) in self }` for `f` = `map`.
    pub fn apply_range(self, map: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_apply_range(self.into_raw(), map.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    /// Simplifies the representation (same relation).
    pub fn coalesce(self) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_coalesce(self.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    pub fn domain(self) -> Result<UnionSet<'c>> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_domain(self.into_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    pub fn range(self) -> Result<UnionSet<'c>> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_range(self.into_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    /// `{ [x -> y] : (x -> y) in self }`: each pair as one point, whose coordinates are those of
    /// `x` then those of `y`.
    pub fn wrap(self) -> Result<UnionSet<'c>> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_wrap(self.into_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    /// `{ y - x : (x -> y) in self }` for the maps whose two spaces are equal.
    pub fn deltas(self) -> Result<UnionSet<'c>> {
        let ctx = self.ctx;
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_deltas(self.into_raw()) };
        UnionSet::from_raw(ctx, raw)
    }

    /// `{ x -> y : self(x) <lex other(y) }`.
    pub fn lex_lt_union_map(self, other: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_union_map_lex_lt_union_map(self.into_raw(), other.into_raw()) };
        UnionMap::from_raw(ctx, raw)
    }

    pub fn is_empty(&self) -> Result<bool> {
        // SAFETY: `self` is live (keep).
        let b = unsafe { ffi::isl_union_map_is_empty(self.as_raw()) };
        check_bool(self.ctx, b)
    }

    pub fn is_equal(&self, other: &UnionMap<'c>) -> Result<bool> {
        // SAFETY: both are live (keep, keep).
        let b = unsafe { ffi::isl_union_map_is_equal(self.as_raw(), other.as_raw()) };
        check_bool(self.ctx, b)
    }

    pub fn is_subset(&self, other: &UnionMap<'c>) -> Result<bool> {
        // SAFETY: both are live (keep, keep).
        let b = unsafe { ffi::isl_union_map_is_subset(self.as_raw(), other.as_raw()) };
        check_bool(self.ctx, b)
    }

    pub fn is_single_valued(&self) -> Result<bool> {
        // SAFETY: `self` is live (keep).
        let b = unsafe { ffi::isl_union_map_is_single_valued(self.as_raw()) };
        check_bool(self.ctx, b)
    }

    /// The maps of the union, one per pair of spaces (in ISL's order).
    pub fn maps(&self) -> Result<Vec<Map<'c>>> {
        // SAFETY: `self` is live (keep); the list is owned and freed below.
        let list = unsafe { ffi::isl_union_map_get_map_list(self.as_raw()) };
        if list.is_null() {
            return Err(self.ctx.take_error());
        }
        let result = (|| {
            // SAFETY: `list` is a live list (keep).
            let n = check_size(self.ctx, unsafe { ffi::isl_map_list_size(list) })?;
            (0..n)
                .map(|k| {
                    // SAFETY: `list` is live and `k` < its size; the element is owned.
                    let raw = unsafe { ffi::isl_map_list_get_at(list, super::to_c_int(k)?) };
                    Map::from_raw(self.ctx, raw)
                })
                .collect()
        })();
        // SAFETY: the list is owned here and freed once; its elements were copied out.
        unsafe { ffi::isl_map_list_free(list) };
        result
    }
}

// Per statement pair dependence checks (`crate::verify`).
impl<'c> Map<'c> {
    /// `{ x' -> y : (x -> y) in self, (x -> x') in map }`.
    pub fn apply_domain(self, map: Map<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_map_apply_domain(self.into_raw(), map.into_raw()) };
        Map::from_raw(ctx, raw)
    }

    /// `{ x -> y' : (x -> y) in self, (y -> y') in map }`.
    pub fn apply_range(self, map: Map<'c>) -> Result<Self> {
        let ctx = self.ctx;
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_map_apply_range(self.into_raw(), map.into_raw()) };
        Map::from_raw(ctx, raw)
    }
}

/// Maps made from sets: here, so that sets know nothing of maps.
impl<'c> Set<'c> {
    /// The identity map on the set.
    pub fn identity(self) -> Result<Map<'c>> {
        let ctx = self.ctx();
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_set_identity(self.into_raw()) };
        Map::from_raw(ctx, raw)
    }
}
