//! Schedule constraints, the ISL scheduler, schedule trees and their nodes (bands, filters, tiling).

use super::ctx::Kind;
use super::map::UnionMap;
use super::set::{Set, UnionSet};
use super::{check_bool, check_size, ffi, isl_object, take_c_string, to_c_int, Ctx};
use crate::{Error, Result};
use std::os::raw::c_long;

isl_object!(
    /// What the scheduler must respect (validity), should keep close (proximity) and should keep
    /// parallel (coincidence), over an iteration domain.
    ScheduleConstraints, isl_schedule_constraints, isl_schedule_constraints_copy, isl_schedule_constraints_free
);

isl_object!(
    /// A schedule tree.
    Schedule, isl_schedule, isl_schedule_copy, isl_schedule_free
);

isl_object!(
    /// A position in a schedule tree; editing through it yields a node of a new tree.
    ScheduleNode, isl_schedule_node, isl_schedule_node_copy, isl_schedule_node_free
);

/// The kinds of schedule tree nodes this crate distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Band,
    Domain,
    Filter,
    Leaf,
    Sequence,
    Set,
    /// Any other kind (context, expansion, extension, guard, mark), by ISL's number.
    Other(i32),
}

impl<'c> ScheduleConstraints<'c> {
    pub fn on_domain(domain: UnionSet<'c>) -> Result<Self> {
        let ctx = domain.ctx();
        // SAFETY: `domain` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_schedule_constraints_on_domain(domain.into_raw()) };
        ScheduleConstraints::from_raw(ctx, raw)
    }

    /// Constraints on the parameters that hold.
    pub fn set_context(self, context: Set<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe {
            ffi::isl_schedule_constraints_set_context(self.into_raw(), context.into_raw())
        };
        ScheduleConstraints::from_raw(ctx, raw)
    }

    pub fn set_validity(self, deps: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw =
            unsafe { ffi::isl_schedule_constraints_set_validity(self.into_raw(), deps.into_raw()) };
        ScheduleConstraints::from_raw(ctx, raw)
    }

    pub fn set_proximity(self, deps: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe {
            ffi::isl_schedule_constraints_set_proximity(self.into_raw(), deps.into_raw())
        };
        ScheduleConstraints::from_raw(ctx, raw)
    }

    pub fn set_coincidence(self, deps: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe {
            ffi::isl_schedule_constraints_set_coincidence(self.into_raw(), deps.into_raw())
        };
        ScheduleConstraints::from_raw(ctx, raw)
    }

    /// Runs the ISL scheduler (its options are the context's).
    pub fn compute_schedule(self) -> Result<Schedule<'c>> {
        let ctx = self.ctx();
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_schedule_constraints_compute_schedule(self.into_raw()) };
        Schedule::from_raw(ctx, raw)
    }
}

impl<'c> Schedule<'c> {
    /// Parses a tree printed by [`Schedule::to_str`] (or [`Schedule::to_block_str`]).
    pub fn read(ctx: &'c Ctx, text: &str) -> Result<Self> {
        Schedule::from_raw(ctx, ctx.read(Kind::Schedule, text)?.cast())
    }

    /// The tree as one-line (flow style) YAML, which [`Schedule::read`] parses back.
    pub fn to_str(&self) -> Result<String> {
        // SAFETY: `self` is live (keep); the result is a malloc'd string we own.
        let raw = unsafe { ffi::isl_schedule_to_str(self.as_raw()) };
        take_c_string(self.ctx(), raw)
    }

    /// The tree with only a domain node: every instance at the same time.
    pub fn from_domain(domain: UnionSet<'c>) -> Result<Self> {
        let ctx = domain.ctx();
        // SAFETY: `domain` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_schedule_from_domain(domain.into_raw()) };
        Schedule::from_raw(ctx, raw)
    }

    /// Inserts a band right below the domain node, with the members given by `partial`
    /// (instances to a common anonymous space; single-valued).
    pub fn insert_partial_schedule(self, partial: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: `partial` is given to ISL (take); the result is owned.
        let mupa = unsafe { ffi::isl_multi_union_pw_aff_from_union_map(partial.into_raw()) };
        if mupa.is_null() {
            return Err(ctx.take_error());
        }
        // SAFETY: `self` and `mupa` are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_schedule_insert_partial_schedule(self.into_raw(), mupa) };
        Schedule::from_raw(ctx, raw)
    }

    /// The tree over the domain of `map`: each instance `x` runs when `self` runs `map(x)`.
    /// `map` must be a function (single-valued), from instances to `self`'s instances.
    pub fn pullback(self, map: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: `map` is given to ISL (take); the result is owned.
        let upma = unsafe { ffi::isl_union_pw_multi_aff_from_union_map(map.into_raw()) };
        if upma.is_null() {
            return Err(ctx.take_error());
        }
        // SAFETY: `self` and `upma` are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_schedule_pullback_union_pw_multi_aff(self.into_raw(), upma) };
        Schedule::from_raw(ctx, raw)
    }

    /// `self` then `other` (their domains must be disjoint).
    pub fn sequence(self, other: Schedule<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_schedule_sequence(self.into_raw(), other.into_raw()) };
        Schedule::from_raw(ctx, raw)
    }

    /// The root (domain) node.
    pub fn root(&self) -> Result<ScheduleNode<'c>> {
        // SAFETY: `self` is live (keep); the result is owned.
        let raw = unsafe { ffi::isl_schedule_get_root(self.as_raw()) };
        ScheduleNode::from_raw(self.ctx(), raw)
    }

    /// The tree as multi-line (block style) YAML.
    pub fn to_block_str(&self) -> Result<String> {
        let ctx = self.ctx();
        // SAFETY: `ctx` is live; every printer call takes the printer and returns it (or NULL,
        // after freeing it); `self` is kept. The final printer is freed once.
        unsafe {
            let mut p = ffi::isl_printer_to_str(ctx.as_raw());
            p = ffi::isl_printer_set_yaml_style(p, ffi::ISL_YAML_STYLE_BLOCK);
            p = ffi::isl_printer_print_schedule(p, self.as_raw());
            if p.is_null() {
                return Err(ctx.take_error());
            }
            let text = take_c_string(ctx, ffi::isl_printer_get_str(p));
            ffi::isl_printer_free(p);
            text
        }
    }
}

impl<'c> ScheduleNode<'c> {
    pub fn kind(&self) -> Result<NodeKind> {
        // SAFETY: `self` is live (keep).
        let kind = unsafe { ffi::isl_schedule_node_get_type(self.as_raw()) };
        Ok(match kind {
            ffi::ISL_SCHEDULE_NODE_BAND => NodeKind::Band,
            ffi::ISL_SCHEDULE_NODE_DOMAIN => NodeKind::Domain,
            ffi::ISL_SCHEDULE_NODE_FILTER => NodeKind::Filter,
            ffi::ISL_SCHEDULE_NODE_LEAF => NodeKind::Leaf,
            ffi::ISL_SCHEDULE_NODE_SEQUENCE => NodeKind::Sequence,
            ffi::ISL_SCHEDULE_NODE_SET => NodeKind::Set,
            k if k < 0 => return Err(self.ctx().take_error()),
            k => NodeKind::Other(k),
        })
    }

    /// The whole tree this node belongs to (with every edit made through the node).
    pub fn schedule(&self) -> Result<Schedule<'c>> {
        // SAFETY: `self` is live (keep); the result is owned.
        let raw = unsafe { ffi::isl_schedule_node_get_schedule(self.as_raw()) };
        Schedule::from_raw(self.ctx(), raw)
    }

    pub fn n_children(&self) -> Result<usize> {
        // SAFETY: `self` is live (keep).
        let n = unsafe { ffi::isl_schedule_node_n_children(self.as_raw()) };
        check_size(self.ctx(), n)
    }

    /// The `pos`-th child (`pos` < [`ScheduleNode::n_children`]).
    pub fn child(&self, pos: usize) -> Result<ScheduleNode<'c>> {
        let pos = to_c_int(pos)?;
        // SAFETY: `self` is live (keep); ISL checks `pos`; the result is owned.
        let raw = unsafe { ffi::isl_schedule_node_get_child(self.as_raw(), pos) };
        ScheduleNode::from_raw(self.ctx(), raw)
    }

    /// The instances that reach this node.
    pub fn domain(&self) -> Result<UnionSet<'c>> {
        // SAFETY: `self` is live (keep); the result is owned.
        let raw = unsafe { ffi::isl_schedule_node_get_domain(self.as_raw()) };
        UnionSet::from_raw(self.ctx(), raw)
    }

    pub fn band_n_member(&self) -> Result<usize> {
        // SAFETY: `self` is live (keep); ISL checks the node kind.
        let n = unsafe { ffi::isl_schedule_node_band_n_member(self.as_raw()) };
        check_size(self.ctx(), n)
    }

    pub fn band_permutable(&self) -> Result<bool> {
        // SAFETY: `self` is live (keep); ISL checks the node kind.
        let b = unsafe { ffi::isl_schedule_node_band_get_permutable(self.as_raw()) };
        check_bool(self.ctx(), b)
    }

    pub fn band_set_permutable(self, permutable: bool) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe {
            ffi::isl_schedule_node_band_set_permutable(self.into_raw(), i32::from(permutable))
        };
        ScheduleNode::from_raw(ctx, raw)
    }

    /// Splits a band after its first `pos` members; the node stays on the outer part.
    pub fn band_split(self, pos: usize) -> Result<Self> {
        let ctx = self.ctx();
        let pos = to_c_int(pos)?;
        // SAFETY: `self` is given to ISL (take), which checks `pos`; the result is owned.
        let raw = unsafe { ffi::isl_schedule_node_band_split(self.into_raw(), pos) };
        ScheduleNode::from_raw(ctx, raw)
    }

    /// Tiles a band with one size per member; the node becomes the tile band, whose child is
    /// the point band.
    pub fn band_tile(self, sizes: &[i64]) -> Result<Self> {
        let ctx = self.ctx();
        let n = self.band_n_member()?;
        if n != sizes.len() {
            return Err(Error::Isl(format!(
                "{} tile sizes for a band of {n} members",
                sizes.len()
            )));
        }
        let mv = multi_val(ctx, &self, sizes)?;
        // SAFETY: `self` and `mv` are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_schedule_node_band_tile(self.into_raw(), mv) };
        ScheduleNode::from_raw(ctx, raw)
    }

    /// The schedule of the subtree below (and including) this node as a flat map from the
    /// instances reaching it.
    pub fn subtree_schedule_union_map(&self) -> Result<UnionMap<'c>> {
        // SAFETY: `self` is live (keep); the result is owned.
        let raw = unsafe { ffi::isl_schedule_node_get_subtree_schedule_union_map(self.as_raw()) };
        UnionMap::from_raw(self.ctx(), raw)
    }
}

/// An owned `isl_multi_val` in the space of band `band` with the values `sizes`.
fn multi_val(ctx: &Ctx, band: &ScheduleNode<'_>, sizes: &[i64]) -> Result<*mut ffi::isl_multi_val> {
    let sizes = sizes
        .iter()
        .enumerate()
        .map(|(pos, &size)| {
            let size = c_long::try_from(size)
                .map_err(|_| Error::Isl(format!("tile size {size} is too large")))?;
            Ok((to_c_int(pos)?, size))
        })
        .collect::<Result<Vec<_>>>()?;
    // SAFETY: `band` is live (keep); the space is owned and given to isl_multi_val_zero (take).
    let mut mv =
        unsafe { ffi::isl_multi_val_zero(ffi::isl_schedule_node_band_get_space(band.as_raw())) };
    for (pos, size) in sizes {
        if mv.is_null() {
            break;
        }
        // SAFETY: `ctx` is live; the value is owned and given, with `mv`, to set_val (take, take),
        // which returns the owned result or NULL (having freed both).
        mv = unsafe {
            ffi::isl_multi_val_set_val(mv, pos, ffi::isl_val_int_from_si(ctx.as_raw(), size))
        };
    }
    if mv.is_null() {
        return Err(ctx.take_error());
    }
    Ok(mv)
}
