//! Tasks and the dependence protocol: token slots, waiter lists, readiness counters, completion.
//!
//! This module owns every raw pointer of the runtime (see `README.md` in the crate for the
//! protocol and the argument that it is race-free). Its pieces:
//!
//! - [`Task`]: a record of the graph's [`Pool`], set up by the control thread in [`Core::spawn`]
//!   and given back to the pool by the thread that runs it ([`TaskRef::run`]) as the body starts;
//!   [`Core::finish`] drops the bodies of tasks that can never run. Chunks of records are freed
//!   with the graph.
//! - Token slot words (one `AtomicPtr` per key of a [`Stream`]), in three states:
//!   `EMPTY` (not produced, nobody waits), a pointer to the head of a list of [`WaitNode`]s
//!   (not produced, tasks wait), `PRODUCED`. Only the control thread pushes nodes (CAS), only
//!   the token's single producer swaps in `PRODUCED`; `PRODUCED` is final.
//! - [`TaskRef`]: the unique right to run one ready task. It is created exactly once per task,
//!   by whoever brings the task's `missing` counter to zero, and consumed by [`TaskRef::run`].
//! - [`GraphState`]: the per-graph word `finished << 32 | active` that lets the control thread
//!   tell "all done" from "stuck", plus the first panic of a task body.
//! - [`Core`]: the control thread's side of one graph: the streams, which tokens have a
//!   producer, the spawn count, and the end-of-graph wait.
//!
//! Where tracing and statistics will hook in: [`TaskRef::run`] is the only place a task body
//! runs (start/end timestamps, worker index from the [`Sink`]), and [`Core::spawn`] the only
//! place a task is created.

//!
//! Files: this one holds the records ([`Task`], [`WaitNode`]), the right to run one ([`TaskRef`])
//! and the protocol's steps on token slots; `graph_state` the per-graph word and panics;
//! `control` the control thread's side ([`Core`]); `pool` the records' chunks. They share one
//! privacy boundary, this module: every raw pointer stays inside it.

use std::any::Any;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_long, c_void};
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex, PoisonError};

use crate::queues::{Queues, Sink};
use crate::stream::Stream;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use crate::{Error, StuckBarrier, StuckReport, StuckWait, MAX_DIMS};

mod control;
mod graph_state;
mod pool;

pub(crate) use control::Core;
pub(crate) use graph_state::GraphState;
use pool::Pool;

/// Slot word: the token is not produced and no task waits for it.
const EMPTY: *mut () = ptr::null_mut();
/// Slot word: the token is produced (final state). A dangling address (8, no provenance) that
/// is never the address of a heap-allocated node.
const PRODUCED: *mut () = NonNull::<u64>::dangling().as_ptr().cast();

/// The largest number of tasks in one graph (the `finished` half of the graph word).
pub const MAX_TASKS: u64 = u32::MAX as u64;

/// One unit of the graph word: a finished task.
const FINISHED_ONE: u64 = 1 << 32;
/// Mask of the `active` half of the graph word.
const ACTIVE_MASK: u64 = FINISHED_ONE - 1;

/// A C task body: `fn(env, coords)`.
pub type CTaskFn = unsafe extern "C" fn(*const c_void, *const c_long);

thread_local! {
    /// The task whose body runs on this thread: its stream and slot (null when none), for the
    /// crash report of the C ABI.
    static RUNNING: Cell<(*const Stream, usize)> = const { Cell::new((ptr::null(), 0)) };
}

/// The name and key of the task whose body runs on this thread, if any. Async-signal-safe (a
/// thread-local read; the caller formats without allocating): the C ABI's crash handler calls
/// it.
///
/// # Safety
/// The returned stream is alive while its task's body runs, i.e. while the caller interrupts
/// that body (a signal handler on the same thread); it must not be kept beyond.
pub(crate) unsafe fn running_task<'a>() -> Option<(&'a str, [i64; MAX_DIMS], usize)> {
    let (stream, idx) = RUNNING.with(Cell::get);
    // SAFETY: per the contract, a non-null stream is alive during its task's body.
    let stream = unsafe { stream.as_ref() }?;
    Some((stream.name(), stream.coords(idx), stream.ndims()))
}

/// What a task runs: a Rust closure or a C function with its environment pointer.
pub(crate) struct Body<'env>(BodyKind<'env>);

/// A boxed Rust task body.
type RustBody<'env> = Box<dyn FnOnce(&[i64]) + Send + 'env>;

enum BodyKind<'env> {
    Rust(RustBody<'env>),
    C {
        f: CTaskFn,
        env: CEnv,
    },
    /// A soft barrier: nothing to run, only a token to produce.
    Empty,
}

/// A C environment pointer, sent to the worker that runs the task.
struct CEnv(*const c_void);

// SAFETY: the C ABI documents that `env` is shared by the task bodies and read from worker
// threads; whoever builds a C body (`Body::c`) promises that this is sound for its data.
unsafe impl Send for CEnv {}

impl<'env> Body<'env> {
    /// A Rust closure body, called with the task's key.
    pub(crate) fn rust(f: impl FnOnce(&[i64]) + Send + 'env) -> Body<'env> {
        Body(BodyKind::Rust(Box::new(f)))
    }

    /// A C body `f(env, coords)`.
    ///
    /// # Safety
    /// `f` must be safe to call from any thread with `env` and a pointer to the task's key (valid
    /// during the call) until the graph ends, concurrently with the other tasks of the graph.
    pub(crate) unsafe fn c(f: CTaskFn, env: *const c_void) -> Body<'env> {
        Body(BodyKind::C { f, env: CEnv(env) })
    }

    /// No body: a soft barrier.
    pub(crate) fn empty() -> Body<'env> {
        Body(BodyKind::Empty)
    }

    fn is_empty(&self) -> bool {
        matches!(self.0, BodyKind::Empty)
    }

    /// Forgets the borrow lifetime so that the body can be stored in a type-erased task.
    ///
    /// # Safety
    /// The caller must run or drop the body before `'env` ends.
    unsafe fn erase(self) -> Body<'static> {
        match self.0 {
            BodyKind::Rust(f) => {
                // SAFETY: only the lifetime bound of the trait object changes (same layout); the
                // caller keeps the body from outliving 'env.
                let f: RustBody<'static> = unsafe { std::mem::transmute(f) };
                Body(BodyKind::Rust(f))
            }
            BodyKind::C { f, env } => Body(BodyKind::C { f, env }),
            BodyKind::Empty => Body(BodyKind::Empty),
        }
    }

    /// Runs the body with `key`.
    fn call(self, key: &[i64]) {
        match self.0 {
            BodyKind::Rust(f) => f(key),
            BodyKind::C { f, env } => {
                if std::mem::size_of::<c_long>() == std::mem::size_of::<i64>() {
                    // `long` is `i64` (LP64): the key itself, not a copy (a `memcpy` call at
                    // every task). SAFETY: promised by `Body::c`'s caller; `key` outlives the
                    // call, and has the layout of `long`s here.
                    return unsafe { f(env.0, key.as_ptr().cast::<c_long>()) };
                }
                let mut coords = [0 as c_long; MAX_DIMS];
                for (c, &k) in coords.iter_mut().zip(key) {
                    // Keys came from `c_long`s (C ABI) or fit one by the stream's box, which the
                    // C side declared with `long` bounds.
                    *c = k as c_long;
                }
                // SAFETY: promised by `Body::c`'s caller; `coords` outlives the call.
                unsafe { f(env.0, coords.as_ptr()) }
            }
            BodyKind::Empty => {}
        }
    }
}

/// One input of a task, linked into the waiter list of the slot it waits for.
///
/// Written by the control thread before it is published (Release CAS on the slot), then only
/// read, by the token's producer, which reads `next` and `task` *before* decrementing the
/// task's counter (after the decrement the node may be reused).
#[derive(Clone, Copy)]
struct WaitNode {
    task: *mut Task,
    next: *mut WaitNode,
}

impl WaitNode {
    const NONE: WaitNode = WaitNode {
        task: ptr::null_mut(),
        next: ptr::null_mut(),
    };
}

/// Inputs kept inside the task record; a task with more keeps them all in `spill`.
const INLINE_WAITS: usize = 4;

/// A task record: a spawned task, or a vacant record of the graph's pool.
///
/// States: *vacant* (in a free list of the pool, `body` is `None`), *registering* (the control
/// thread holds the `+1` guard in `missing`), *waiting* (`missing > 0`, nodes in slot lists),
/// *ready* (a [`TaskRef`] exists, in a deque or held by a thread), *running* (the record is
/// given back to the pool as the body starts: vacant again). Fields other than `missing` are
/// written only while one thread owns the record: the control thread while it is vacant (taken
/// from its free list) or registering, the `TaskRef` holder while it is ready.
///
/// Layout: what the thread that runs a task reads and writes (and its producers' counter) is
/// the first cache line, [`HOT_BYTES`]; the rest (the input nodes aside, which producers read)
/// only the control thread touches for a task without arrivals. A record moves between the
/// control thread and the worker that runs it at every task; each line the two share costs a
/// transfer between cores (with empty tasks on 2 threads, the spawn's largest cost).
#[repr(C, align(64))]
struct Task {
    /// Inputs not yet produced, plus 1 while the control thread registers them.
    missing: AtomicUsize,
    /// Intrusive link: the ready list built by [`TaskRef::run`] (owner only), or a free list.
    link: *mut Task,
    graph: *const GraphState,
    stream: *const Stream,
    body: Option<Body<'static>>,
    /// The output token's slot index in `stream` (below [`crate::stream::MAX_KEYS`]).
    idx: u32,
    /// `arrive.len()`, where the running thread reads it without touching `arrive`.
    n_arrive: u32,
    /// Number of distinct inputs: nodes `inline[..n]`, or `spill[..n]` when `n > INLINE_WAITS`.
    n_waits: usize,
    inline: [WaitNode; INLINE_WAITS],
    /// Nodes of a task with many inputs; resized only while the record is vacant or
    /// registering (never while a node is published), its capacity kept for later tasks.
    spill: Vec<WaitNode>,
    /// The counted barriers this task arrives at when it finishes (their records; each stays
    /// alive until this arrival, because a barrier accepts no more arrivals than its count).
    arrive: Vec<*mut Task>,
}

/// Bytes at the start of a [`Task`] that the thread running it touches (one cache line).
#[cfg_attr(loom, allow(dead_code))]
const HOT_BYTES: usize = 64;
#[cfg(not(loom))]
const _: () = assert!(std::mem::offset_of!(Task, n_waits) <= HOT_BYTES);

impl Task {
    fn vacant() -> Task {
        Task {
            missing: AtomicUsize::new(0),
            link: ptr::null_mut(),
            graph: ptr::null(),
            stream: ptr::null(),
            body: None,
            idx: 0,
            n_arrive: 0,
            n_waits: 0,
            inline: [WaitNode::NONE; INLINE_WAITS],
            spill: Vec::new(),
            arrive: Vec::new(),
        }
    }

    /// Node `i` of the record `t` (`i < n_waits`).
    ///
    /// # Safety
    /// `t` is a live record whose `n_waits` and `spill` are not being changed.
    unsafe fn node(t: *mut Task, i: usize) -> *mut WaitNode {
        // SAFETY: per the contract; the node arrays stay in place while the record lives.
        unsafe {
            if (*t).n_waits <= INLINE_WAITS {
                ptr::addr_of_mut!((*t).inline).cast::<WaitNode>().add(i)
            } else {
                (*t).spill.as_mut_ptr().add(i)
            }
        }
    }
}

/// The unique right to run one ready task (its `missing` counter reached zero).
///
/// Not `Clone`: it is created once per task and consumed by [`TaskRef::run`], which is why a
/// task runs at most once.
pub(crate) struct TaskRef(NonNull<Task>);

// SAFETY: a TaskRef is the sole owner of its task (see the type doc); the task's fields are
// `Send` (the body is `Send`, the raw pointers point to graph data shared by design).
unsafe impl Send for TaskRef {}

impl TaskRef {
    /// Runs the task's body, publishes its token, and hands the tasks this made ready to `sink`,
    /// except one, which it returns: the caller runs it next (locality: a task made ready by a
    /// thread runs on that thread first) or, if it cannot, pushes it with [`Queues::push`] and
    /// [`Queues::notify_work`].
    ///
    /// Never unwinds for a panicking body (the panic is recorded in the graph); a panic in the
    /// runtime itself is a bug that the caller turns into a fatal error.
    pub(crate) fn run(self, rt: &Queues<TaskRef>, sink: &Sink<'_, TaskRef>) -> Option<TaskRef> {
        self.run_counted(rt, sink, true)
    }

    /// The thread this ready task prefers among `n_threads` ([`Stream::home`]), if any.
    pub(crate) fn home(&self, n_threads: usize) -> Option<usize> {
        let t = self.0.as_ptr();
        // SAFETY: `self` owns the ready record (see the type doc); its stream lives as long as
        // the graph, which outlives every ready task of it.
        unsafe { (*(*t).stream).home((*t).idx as usize, n_threads) }
    }

    /// Runs a task that the control thread made ready at spawn and runs at once, without
    /// counting it active (it is not waiting for the graph meanwhile, so nobody reads the count
    /// in between): its completion adds no `-1`. Returns a successor as [`TaskRef::run`] does.
    fn run_inline(self, rt: &Queues<TaskRef>) -> Option<TaskRef> {
        self.run_counted(rt, &Sink::Global, false)
    }

    fn run_counted(
        self,
        rt: &Queues<TaskRef>,
        sink: &Sink<'_, TaskRef>,
        counted: bool,
    ) -> Option<TaskRef> {
        let t = self.0.as_ptr();
        // SAFETY: `self` is the unique owner of a ready task: every producer of its inputs is done
        // with its nodes (they read them before their decrement), the control thread released its
        // guard, and it is in no deque any more. So nothing else references the record.
        let (graph, stream, idx, body, n_arrive) = unsafe {
            (
                (*t).graph,
                (*t).stream,
                (*t).idx as usize,
                (*t).body.take(),
                (*t).n_arrive as usize,
            )
        };
        // SAFETY: the graph state and the streams live until `Core::finish` has seen every task
        // finish (the graph word update below is this task's last access to them).
        let (graph, stream) = unsafe { (&*graph, &*stream) };
        if n_arrive == 0 {
            // Everything needed is copied out: the record goes back to the pool now, so that
            // the control thread reuses it while it is still in cache.
            // SAFETY: we own the record and do not touch it again.
            unsafe { graph.give_back(t) };
        }
        let body = body.expect("a ready task record without a body");
        let observed = rt.obs.on && !body.is_empty();

        let key = stream.coords(idx);
        let key = &key[..stream.ndims()];
        let started = if observed { rt.obs.now() } else { 0 };
        if graph.poisoned.load(Ordering::Relaxed) {
            // An earlier task panicked: skip the body but still produce the token, so that the
            // graph drains quickly and the panic reaches the waiter.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(body)));
        } else {
            RUNNING.with(|r| r.set((stream, idx)));
            let result = catch_unwind(AssertUnwindSafe(|| body.call(key)));
            RUNNING.with(|r| r.set((ptr::null(), 0)));
            if let Err(payload) = result {
                graph.record_panic(stream.token_name(idx), payload);
            }
        }
        if observed {
            let name = stream.shared_name();
            rt.obs.task(sink.slot(), name, key, started, rt.obs.now());
        }

        // Publish the token and take the list of waiting inputs.
        let head = publish(&stream.slots[idx])
            .unwrap_or_else(|| panic!("token {} published twice", stream.token_name(idx)));
        let mut ready: *mut Task = ptr::null_mut();
        // SAFETY: `head` is the list our publication took.
        let mut n_ready = unsafe { wake_waiters(head, &mut ready) };
        if n_arrive > 0 {
            for i in 0..n_arrive {
                // SAFETY: we still own the record (not given back when it has arrivals).
                let barrier = unsafe { (&(*t).arrive)[i] };
                // SAFETY: the barrier's record lives until its count reaches zero, which needs
                // this decrement (the control thread admits at most `count` arrivals).
                n_ready += u64::from(unsafe { count_down(barrier, &mut ready) });
            }
            // SAFETY: we own the record and do not touch it again.
            unsafe { graph.give_back(t) };
        }

        let active_after = graph.finish_one(n_ready, counted);
        // From here on `graph` and `stream` must not be touched: the control thread may free
        // them as soon as it sees the last task finish.

        // The first ready task is kept to run next here, whatever thread it prefers (its
        // inputs are in this thread's cache: a chain of tiles stays on the thread that runs
        // its first, even one taken from another thread's block); of the others, a task that
        // prefers another thread goes to that thread's home queue, the rest to `sink`.
        let (me, n_threads) = (sink.slot(), rt.n_threads());
        let mut next = None;
        let mut pushed = 0;
        while let Some(t) = NonNull::new(ready) {
            // SAFETY: we own `t` (not pushed); read its link before handing it over.
            ready = unsafe { (*t.as_ptr()).link };
            let t = TaskRef(t);
            if next.is_none() {
                next = Some(t);
                continue;
            }
            match t.home(n_threads) {
                Some(home) if home != me => rt.push_home(home, t),
                _ => rt.push(sink, t),
            }
            pushed += 1;
        }
        if pushed > 0 {
            rt.notify_work(pushed);
        }
        // An uncounted task runs on its graph's control thread, which is not waiting: nobody to
        // tell that the graph went idle.
        if counted && n_ready == 0 && active_after == 0 {
            rt.notify_graph_idle();
        }
        next
    }
}

/// Control thread, registering `task`: links `node` (of `task`, unpublished) into the waiter list
/// of `slot`, unless the token is produced already. Returns whether it was.
///
/// # Safety
/// `task` is registering (the control thread holds its guard) and `node` is one of its nodes,
/// not yet published.
unsafe fn wait_on(slot: &AtomicPtr<()>, task: *mut Task, node: *mut WaitNode) -> bool {
    // SAFETY: per the contract, we may write the unpublished node.
    unsafe { (*node).task = task };
    let mut cur = slot.load(Ordering::Acquire);
    loop {
        if cur == PRODUCED {
            return true;
        }
        // SAFETY: as above.
        unsafe { (*node).next = cur.cast::<WaitNode>() };
        // Release publishes the node's fields (and the task's initial counter) to the producer;
        // a failure can only be the producer's swap to PRODUCED, read with Acquire so that its
        // body's writes happen before this task's (or, weak CAS, nothing: retry).
        match slot.compare_exchange_weak(
            cur,
            node.cast::<()>(),
            Ordering::Release,
            Ordering::Acquire,
        ) {
            Ok(_) => return false,
            Err(now) => cur = now,
        }
    }
}

/// Control thread: releases the registration guard of `task` together with `satisfied` inputs
/// found produced. Returns whether this made the task ready (the caller then owns it).
///
/// # Safety
/// `task` is registering, with `satisfied` inputs found produced by [`wait_on`].
unsafe fn release_guard(task: *mut Task, satisfied: usize) -> bool {
    let release = satisfied + 1;
    // SAFETY: the guard keeps the record alive up to this decrement.
    unsafe { (*task).missing.fetch_sub(release, Ordering::AcqRel) == release }
}

/// Producer: publishes the token of `slot` and returns the list of waiting inputs, or `None` if
/// it was published already (a bug: producers are unique).
fn publish(slot: &AtomicPtr<()>) -> Option<*mut WaitNode> {
    let head = slot.swap(PRODUCED, Ordering::AcqRel);
    (head != PRODUCED).then_some(head.cast::<WaitNode>())
}

/// Producer: one of the inputs of each node's task is produced; links the tasks this makes ready
/// into `ready` (through `Task::link`) and returns how many.
///
/// # Safety
/// `head` is a list taken by [`publish`].
unsafe fn wake_waiters(head: *mut WaitNode, ready: &mut *mut Task) -> u64 {
    let mut n_ready = 0;
    let mut node = head;
    while !node.is_null() {
        // SAFETY: the node was published by a Release CAS that the AcqRel swap of `publish`
        // follows in the slot's modification order, so its fields are visible; its task cannot
        // run (and its record be reused) before our decrement, which comes after these reads.
        let (next, waiter) = unsafe { ((*node).next, (*node).task) };
        // SAFETY: `waiter` is alive until its counter reaches zero.
        n_ready += u64::from(unsafe { count_down(waiter, ready) });
        node = next;
    }
    n_ready
}

/// Decrements the counter of `task`; if that makes it ready, links it into `ready` and returns
/// true (the caller then owns it).
///
/// # Safety
/// `task` is alive and waiting for this decrement (an input taken from a slot list, or an
/// admitted arrival at a counted barrier).
unsafe fn count_down(task: *mut Task, ready: &mut *mut Task) -> bool {
    // SAFETY: per the contract.
    if unsafe { (*task).missing.fetch_sub(1, Ordering::AcqRel) } == 1 {
        // SAFETY: our decrement made the task ready, so we own it exclusively.
        unsafe { (*task).link = *ready };
        *ready = task;
        true
    } else {
        false
    }
}

#[cfg(all(test, loom))]
mod loom_model;
