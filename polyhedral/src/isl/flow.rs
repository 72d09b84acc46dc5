//! Exact dataflow analysis: `isl_union_access_info` in, `isl_union_flow` out.

use super::map::UnionMap;
use super::{ffi, isl_object};
use crate::Result;

isl_object!(
    /// The accesses of a dataflow problem: sinks, sources, kills and the order they execute in.
    AccessInfo, isl_union_access_info, isl_union_access_info_copy, isl_union_access_info_free
);

isl_object!(
    /// The solution of a dataflow problem.
    Flow, isl_union_flow, isl_union_flow_copy, isl_union_flow_free
);

impl<'c> AccessInfo<'c> {
    /// A problem whose sinks are `sink` (statement instances to the elements they access).
    pub fn from_sink(sink: UnionMap<'c>) -> Result<Self> {
        let ctx = sink.ctx();
        // SAFETY: `sink` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_access_info_from_sink(sink.into_raw()) };
        AccessInfo::from_raw(ctx, raw)
    }

    /// Accesses that definitely write the element: sources that also hide earlier sources.
    pub fn set_must_source(self, source: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe {
            ffi::isl_union_access_info_set_must_source(self.into_raw(), source.into_raw())
        };
        AccessInfo::from_raw(ctx, raw)
    }

    /// Accesses that may be sources; they hide nothing.
    pub fn set_may_source(self, source: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe {
            ffi::isl_union_access_info_set_may_source(self.into_raw(), source.into_raw())
        };
        AccessInfo::from_raw(ctx, raw)
    }

    /// Accesses that hide earlier sources without being sources themselves.
    pub fn set_kill(self, kill: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe { ffi::isl_union_access_info_set_kill(self.into_raw(), kill.into_raw()) };
        AccessInfo::from_raw(ctx, raw)
    }

    /// The execution order: statement instances to lexicographically ordered times.
    pub fn set_schedule_map(self, schedule: UnionMap<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe {
            ffi::isl_union_access_info_set_schedule_map(self.into_raw(), schedule.into_raw())
        };
        AccessInfo::from_raw(ctx, raw)
    }

    pub fn compute_flow(self) -> Result<Flow<'c>> {
        let ctx = self.ctx();
        // SAFETY: `self` is given to ISL (take); the result is owned.
        let raw = unsafe { ffi::isl_union_access_info_compute_flow(self.into_raw()) };
        Flow::from_raw(ctx, raw)
    }
}

impl<'c> Flow<'c> {
    /// Source instance -> sink instance, for every source that may be the last one before the
    /// sink (this includes the definite ones).
    pub fn may_dependence(&self) -> Result<UnionMap<'c>> {
        // SAFETY: `self` is live (keep); the result is owned.
        let raw = unsafe { ffi::isl_union_flow_get_may_dependence(self.as_raw()) };
        UnionMap::from_raw(self.ctx(), raw)
    }
}

// Dataflow analysis on a schedule tree (`crate::deps`).
impl<'c> AccessInfo<'c> {
    /// The execution order as a schedule tree: ISL orders accesses in different children of a
    /// sequence node by the children's order, without comparing schedule values.
    pub fn set_schedule(self, schedule: super::Schedule<'c>) -> Result<Self> {
        let ctx = self.ctx();
        // SAFETY: both are given to ISL (take, take); the result is owned.
        let raw = unsafe {
            ffi::isl_union_access_info_set_schedule(self.into_raw(), schedule.into_raw())
        };
        AccessInfo::from_raw(ctx, raw)
    }
}
