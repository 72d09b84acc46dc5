//! The map and set operations of the tile graph (`crate::tile_graph`): simplification of tile
//! dependences (equalities, redundancies, coalescing, disjoint basic maps), their domains and
//! ranges, compositions and products, and the set algebra of the partition.
//!
//! Kept apart from `map.rs`/`set.rs` so that the tile-graph work adds declarations without editing
//! the shared ones; same ownership conventions as the rest of this module.

use super::map::Map;
use super::set::Set;
use super::{c_string, check_bool, check_size};
use crate::Result;
use std::os::raw::c_char;

#[allow(non_camel_case_types)]
type isl_map = super::ffi::isl_map;
#[allow(non_camel_case_types)]
type isl_set = super::ffi::isl_set;

unsafe extern "C" {
    // map.h
    fn isl_map_detect_equalities(map: *mut isl_map) -> *mut isl_map; // take
    fn isl_map_remove_redundancies(map: *mut isl_map) -> *mut isl_map; // take
    fn isl_map_coalesce(map: *mut isl_map) -> *mut isl_map; // take
    fn isl_map_make_disjoint(map: *mut isl_map) -> *mut isl_map; // take
    fn isl_map_n_basic_map(map: *mut isl_map) -> super::ffi::isl_size; // keep
    fn isl_map_intersect(a: *mut isl_map, b: *mut isl_map) -> *mut isl_map; // take, take
    fn isl_map_domain(map: *mut isl_map) -> *mut isl_set; // take
    fn isl_map_range(map: *mut isl_map) -> *mut isl_set; // take
    fn isl_map_from_domain_and_range(domain: *mut isl_set, range: *mut isl_set) -> *mut isl_map; // take, take
    fn isl_set_lex_lt_set(set1: *mut isl_set, set2: *mut isl_set) -> *mut isl_map; // take, take
    fn isl_map_is_equal(a: *mut isl_map, b: *mut isl_map) -> super::ffi::isl_bool; // keep, keep
    fn isl_map_is_empty(map: *mut isl_map) -> super::ffi::isl_bool; // keep
                                                                    // set.h
    fn isl_set_coalesce(set: *mut isl_set) -> *mut isl_set; // take
    fn isl_set_set_tuple_name(set: *mut isl_set, name: *const c_char) -> *mut isl_set; // take
}

/// A unary map operation that takes its argument and gives its result.
macro_rules! map_op {
    ($(#[$doc:meta])* $name:ident, $ffi:ident) => {
        $(#[$doc])*
        pub fn $name(self) -> Result<Self> {
            let ctx = self.ctx();
            // SAFETY: `self` is given to ISL (take); the result is owned.
            let raw = unsafe { $ffi(self.into_raw()) };
            Map::from_raw(ctx, raw)
        }
    };
}

impl<'c> Map<'c> {
    map_op!(
        /// Makes implicit equalities explicit (same pairs).
        detect_equalities,
        isl_map_detect_equalities
    );
    map_op!(
        /// Removes redundant constraints of each basic map (same pairs).
        remove_redundancies,
        isl_map_remove_redundancies
    );
    map_op!(
        /// Merges basic maps where ISL can: one subsumed by another is dropped, a superset replaces
        /// the ones it covers, partial overlaps are fused when their union is convex (same pairs).
        coalesce,
        isl_map_coalesce
    );
    map_op!(
        /// Rewrites the map as a union of pairwise disjoint basic maps (same pairs).
        make_disjoint,
        isl_map_make_disjoint
    );

    /// The number of basic maps of the representation.
    pub fn n_basic_maps(&self) -> Result<usize> {
        // SAFETY: `self` is live (keep).
        check_size(self.ctx(), unsafe { isl_map_n_basic_map(self.as_raw()) })
    }

    pub fn intersect(self, other: Map<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { isl_map_intersect(self.into_raw(), other.into_raw()) };
        Map::from_raw(ctx, raw)
    }

    /// The elements that are related to something (the sources of a dependence).
    pub fn domain(self) -> Result<Set<'c>> {
        let ctx = self.ctx();
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { isl_map_domain(self.into_raw()) };
        Set::from_raw(ctx, raw)
    }

    /// The elements that something is related to (the targets of a dependence).
    pub fn range(self) -> Result<Set<'c>> {
        let ctx = self.ctx();
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { isl_map_range(self.into_raw()) };
        Set::from_raw(ctx, raw)
    }

    /// The product `domain × range`: every element of `domain` related to every one of `range`.
    pub fn from_domain_and_range(domain: Set<'c>, range: Set<'c>) -> Result<Self> {
        let ctx = domain.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { isl_map_from_domain_and_range(domain.into_raw(), range.into_raw()) };
        Map::from_raw(ctx, raw)
    }

    pub fn is_equal(&self, other: &Map<'c>) -> Result<bool> {
        // SAFETY: both are live (keep, keep).
        check_bool(self.ctx(), unsafe {
            isl_map_is_equal(self.as_raw(), other.as_raw())
        })
    }

    pub fn is_empty(&self) -> Result<bool> {
        // SAFETY: `self` is live (keep).
        check_bool(self.ctx(), unsafe { isl_map_is_empty(self.as_raw()) })
    }
}

impl<'c> Set<'c> {
    /// The pairs `x -> y` of a point of `self` and a point of `other` with `x` before `y` in
    /// lexicographic order.
    pub fn lex_lt_set(self, other: Set<'c>) -> Result<Map<'c>> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { isl_set_lex_lt_set(self.into_raw(), other.into_raw()) };
        Map::from_raw(ctx, raw)
    }

    /// Simplifies the representation (same points).
    pub fn coalesce(self) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { isl_set_coalesce(self.into_raw()) };
        Set::from_raw(ctx, raw)
    }

    /// Renames the set's tuple.
    pub fn set_tuple_name(self, name: &str) -> Result<Self> {
        let ctx = self.ctx();
        let name = c_string(name)?;
        // SAFETY: `self` is given to ISL (take); `name` is only read (ISL copies it); owned result.
        let raw = unsafe { isl_set_set_tuple_name(self.into_raw(), name.as_ptr()) };
        Set::from_raw(ctx, raw)
    }
}
