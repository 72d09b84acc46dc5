//! The atomics of the dependence protocol (token slots, readiness counters, the graph word):
//! std's, or loom's in the crate's unit tests built with `RUSTFLAGS="--cfg loom"`, where
//! `task::loom_model` explores every interleaving of the protocol's steps.
//!
//! Only `task` and `stream` use these; the thread pool keeps std's atomics (it is not modelled).

#![forbid(unsafe_code)]

#[cfg(all(loom, test))]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
pub(crate) use std::sync::atomic::Ordering;
#[cfg(not(all(loom, test)))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize};
