//! streamrt: the dataflow task runtime of tiledflow-generated programs.
//!
//! A sequential *control thread* builds a [`Graph`]: it declares streams (a named box of integer
//! keys; a key is a tile's coordinates) and spawns tasks in program order. A task waits for a
//! set of `(stream, key)` tokens and produces exactly one token, `(out stream, its key)`, when
//! its body returns. Tokens are never consumed: a produced token satisfies every reader. Ready
//! tasks run on a [`Runtime`]'s workers (work stealing, crossbeam deques) and on the control
//! thread while it waits in [`Graph::wait`].
//!
//! The runtime knows nothing of polyhedra or of the compiler: its inputs are streams, keys and
//! task bodies; it depends on no compiler crate.
//!
//! Roles and modules:
//! - [`Graph`], [`StreamId`], [`scope`] (module `graph`): the safe API; validates keys and ids.
//! - [`Runtime`] (module `runtime`): the worker threads and their loop.
//! - module `queues`: the ready-task queues (work-stealing deques, the injector) and the
//!   sleep/wake protocol, generic over the task handle (it knows nothing of tasks).
//! - [`Observe`] (module `observe`): trace and statistics.
//! - module `task`: tasks, token slots, soft barriers, the record pool and the dependence
//!   protocol (all the unsafe code but FFI), and the control thread's end-of-graph wait, in
//!   files by part (records and protocol steps, graph state, the control thread's side, the
//!   pool); its submodule `loom_model` model-checks the protocol.
//! - module `stream`: key boxes and their linearization.
//! - [`Blocks`] (module `blocks`): scratch memory lent to the tasks of a tile row and taken back
//!   when they are done (the storage of the compiler's arrays of copies).
//! - module `sync`: the protocol's atomics (loom's under `--cfg loom`).
//! - [`ffi`]: the C ABI of `include/streamrt.h`; errors there print `streamrt: error: ...` and
//!   exit with status 70; a crashing C task body is named before the process dies.
//!
//! The GPU path of the C ABI (`tf_gpu_*`) is the crate `streamrt-gpu`, whose static library
//! holds this crate too: programs of the CPU targets link `libstreamrt.a`, which has no CUDA
//! code; it uses the C ABI's helpers of [`ffi`] (argument checks, the panic guard).
//!
//! The protocol (slot and task states, atomic orderings, why no task is lost or run twice, why
//! the end-of-graph wait terminates) is described in the crate's `README.md`.
//!
//! Observability (module `observe`): `TILEDFLOW_TRACE=file.json` writes a Chrome/Perfetto trace
//! with one event per task; `TILEDFLOW_STATS=1` prints tasks, steals, idle time and when the first
//! task began, per thread, at the end of each graph. Both are read once when a runtime starts ([`Observe`]).

#![warn(missing_docs, unsafe_op_in_unsafe_fn)]

mod blocks;
mod error;
pub mod ffi;
mod graph;
mod observe;
mod placement;
mod queues;
mod runtime;
mod stream;
mod sync;
mod task;

pub use blocks::Blocks;
pub use error::{Error, StuckBarrier, StuckReport, StuckWait};
pub use graph::{scope, Graph, StreamId};
pub use observe::{Observe, STATS_ENV, TRACE_ENV};
pub use runtime::{threads_from_env, Runtime, MAX_THREADS, THREADS_ENV};
pub use stream::MAX_KEYS;
pub use task::MAX_TASKS;

/// The largest number of key dimensions of a stream (`TF_MAX_DIMS` in `streamrt.h`).
pub const MAX_DIMS: usize = 8;

/// The exit status of a program that misused the runtime or whose graph got stuck.
pub const EXIT_STATUS: i32 = 70;

/// Prints `streamrt: error: <message>` and exits the process with [`EXIT_STATUS`].
pub(crate) fn fatal(message: impl std::fmt::Display) -> ! {
    eprintln!("streamrt: error: {message}");
    std::process::exit(EXIT_STATUS)
}

/// Ends the process with a fatal error if dropped: armed around code whose unwinding would
/// leave tasks running on freed memory (a panic there is a runtime bug). Disarm with
/// `mem::forget`.
pub(crate) struct FatalOnUnwind(pub(crate) &'static str);

impl Drop for FatalOnUnwind {
    fn drop(&mut self) {
        fatal(format_args!("internal error (a panic) while {}", self.0));
    }
}
