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

use std::any::Any;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_long, c_void};
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::{Arc, Mutex, PoisonError};

use crate::runtime::{GraphEnd, Inner, Sink};
use crate::stream::Stream;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use crate::{Error, StuckBarrier, StuckReport, StuckWait, MAX_DIMS};

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
struct Task {
    /// Inputs not yet produced, plus 1 while the control thread registers them.
    missing: AtomicUsize,
    /// Intrusive link: the ready list built by [`TaskRef::run`] (owner only), or a free list.
    link: *mut Task,
    graph: *const GraphState,
    stream: *const Stream,
    /// The output token's slot index in `stream`.
    idx: usize,
    body: Option<Body<'static>>,
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

impl Task {
    fn vacant() -> Task {
        Task {
            missing: AtomicUsize::new(0),
            link: ptr::null_mut(),
            graph: ptr::null(),
            stream: ptr::null(),
            idx: 0,
            body: None,
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
    /// thread runs on that thread first) or, if it cannot, pushes it with [`Inner::push`] and
    /// [`Inner::notify_work`].
    ///
    /// Never unwinds for a panicking body (the panic is recorded in the graph); a panic in the
    /// runtime itself is a bug that the caller turns into a fatal error.
    pub(crate) fn run(self, rt: &Inner, sink: &Sink<'_>) -> Option<TaskRef> {
        self.run_counted(rt, sink, true)
    }

    /// Runs a task that the control thread made ready at spawn and runs at once, without
    /// counting it active (it is not waiting for the graph meanwhile, so nobody reads the count
    /// in between): its completion adds no `-1`. Returns a successor as [`TaskRef::run`] does.
    fn run_inline(self, rt: &Inner) -> Option<TaskRef> {
        self.run_counted(rt, &Sink::Global, false)
    }

    fn run_counted(self, rt: &Inner, sink: &Sink<'_>, counted: bool) -> Option<TaskRef> {
        let t = self.0.as_ptr();
        // SAFETY: `self` is the unique owner of a ready task: every producer of its inputs is done
        // with its nodes (they read them before their decrement), the control thread released its
        // guard, and it is in no deque any more. So nothing else references the record.
        let (graph, stream, idx, body, n_arrive) = unsafe {
            (
                (*t).graph,
                (*t).stream,
                (*t).idx,
                (*t).body.take(),
                (*t).arrive.len(),
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

        let next = NonNull::new(ready).map(|t| {
            // SAFETY: we own `t` (not pushed); read its link before handing the others over.
            ready = unsafe { (*t.as_ptr()).link };
            TaskRef(t)
        });
        while let Some(t) = NonNull::new(ready) {
            // SAFETY: as above.
            ready = unsafe { (*t.as_ptr()).link };
            rt.push(sink, TaskRef(t));
        }
        if n_ready > 1 {
            rt.notify_work(n_ready - 1);
        }
        // An uncounted task runs on its graph's control thread, which is not waiting: nobody to
        // tell that the graph went idle.
        if counted && n_ready == 0 && active_after == 0 {
            rt.notify_graph_idle();
        }
        next
    }
}

/// The part of a graph that workers touch besides its streams: the graph word and panics.
pub(crate) struct GraphState {
    /// `finished << 32 | active`: `finished` counts tasks that completed, `active` tasks that
    /// are ready or running. Updated by RMWs only (so every update continues the release
    /// sequence the control thread acquires at the end).
    word: AtomicU64,
    /// Set when a body panicked: later bodies of this graph are skipped.
    poisoned: AtomicBool,
    /// The first panic: (task name, message).
    panic: Mutex<Option<(String, String)>>,
    /// Records given back by the threads that ran them (a stack linked by `Task::link`): any
    /// thread pushes (Release CAS); only the control thread takes, the whole stack at once
    /// (Acquire swap), so there is no ABA problem.
    returned: AtomicPtr<Task>,
}

impl GraphState {
    fn new() -> GraphState {
        GraphState {
            word: AtomicU64::new(0),
            poisoned: AtomicBool::new(false),
            panic: Mutex::new(None),
            returned: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Gives the record `t` back to the graph's pool.
    ///
    /// # Safety
    /// The caller owns `t` (a record of this graph's pool, its body taken) and never touches it
    /// again.
    unsafe fn give_back(&self, t: *mut Task) {
        let mut head = self.returned.load(Ordering::Relaxed);
        loop {
            // SAFETY: we own `t` until the CAS below publishes it.
            unsafe { (*t).link = head };
            match self
                .returned
                .compare_exchange_weak(head, t, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// A task finishes (and leaves the active count if `counted`: it was counted active) and
    /// `n_ready` tasks become active, in one step (so the active count never drops to zero while
    /// some task is ready or running). Returns the active count after it. The caller's last
    /// access to the graph's memory.
    fn finish_one(&self, n_ready: u64, counted: bool) -> u64 {
        let add = FINISHED_ONE + n_ready - u64::from(counted);
        let old = self.word.fetch_add(add, Ordering::AcqRel);
        (old & ACTIVE_MASK) + n_ready - u64::from(counted)
    }

    /// A task became ready at spawn: count it active before it can run (the hand-over to the
    /// thread that runs it publishes the increment).
    fn activate_one(&self) {
        self.word.fetch_add(1, Ordering::Relaxed);
    }

    /// `(finished, active)`, read with Acquire: once `finished` equals the number of tasks
    /// spawned, every task body's writes are visible to the caller.
    pub(crate) fn snapshot(&self) -> (u64, u64) {
        let w = self.word.load(Ordering::Acquire);
        (w >> 32, w & ACTIVE_MASK)
    }

    fn record_panic(&self, task: String, payload: Box<dyn Any + Send>) {
        let message = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "(a panic payload that is not a string)".to_string()
        };
        self.poisoned.store(true, Ordering::Relaxed);
        let mut first = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
        if first.is_none() {
            *first = Some((task, message));
        }
    }

    fn take_panic(&self) -> Option<(String, String)> {
        self.panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// The control thread's side of one graph: streams, producers, spawn count, end-of-graph wait.
///
/// `'env` bounds the data that task bodies borrow. Every task is run or freed before the core
/// is dropped ([`Core::finish`], also called by `Drop`), so a `Core<'env>` that is dropped
/// (never leaked) keeps bodies from outliving `'env`. The public API hands out graphs with a
/// non-`'static` `'env` only by `&mut` (see [`crate::scope`]), so they cannot be leaked.
pub(crate) struct Core<'env> {
    rt: Arc<Inner>,
    state: Arc<GraphState>,
    streams: Vec<Arc<Stream>>,
    /// Per stream, one bit per key: a task producing this token was spawned.
    claimed: Vec<Vec<u64>>,
    spawned: u64,
    finished: bool,
    /// When the graph began (observer's clock; 0 when not observing).
    began: u64,
    /// Task records of this graph.
    pool: Pool,
    /// The counted barriers, by (stream, slot index).
    barriers: HashMap<(u32, usize), Counted>,
    /// Invariant in `'env` (so `Core<'static>` cannot stand in for a `Core<'env>`).
    _env: PhantomData<fn(&'env ()) -> &'env ()>,
}

impl<'env> Core<'env> {
    /// A new, empty graph on runtime `rt`.
    pub(crate) fn new(rt: Arc<Inner>) -> Core<'env> {
        let began = if rt.obs.on { rt.obs.graph_begin() } else { 0 };
        Core {
            began,
            rt,
            state: Arc::new(GraphState::new()),
            streams: Vec::new(),
            claimed: Vec::new(),
            spawned: 0,
            finished: false,
            pool: Pool::default(),
            barriers: HashMap::new(),
            _env: PhantomData,
        }
    }

    /// The runtime this graph runs on.
    pub(crate) fn runtime(&self) -> &Inner {
        &self.rt
    }

    /// Declares a stream and returns its id (its position).
    pub(crate) fn add_stream(&mut self, name: &str, lo: &[i64], hi: &[i64]) -> Result<u32, Error> {
        let id = u32::try_from(self.streams.len())
            .map_err(|_| Error::Misuse(format!("too many streams (at most {})", u32::MAX)))?;
        let stream = Stream::new(id, name, lo, hi)?;
        self.claimed.push(vec![0u64; stream.len().div_ceil(64)]);
        self.streams.push(Arc::new(stream));
        Ok(id)
    }

    /// The stream with id `id`, if declared.
    pub(crate) fn stream(&self, id: usize) -> Option<&Stream> {
        self.streams.get(id).map(|s| &**s)
    }

    /// Number of streams declared.
    pub(crate) fn n_streams(&self) -> usize {
        self.streams.len()
    }

    fn is_claimed(&self, stream: u32, idx: usize) -> bool {
        self.claimed[stream as usize][idx / 64] & (1 << (idx % 64)) != 0
    }

    /// Declares a counted barrier: a bodiless task producing `out` once `count` tasks spawned
    /// later arrive at it (see [`Core::spawn`]'s `arrivals`).
    pub(crate) fn counted_barrier(&mut self, out: (u32, usize), count: u64) -> Result<(), Error> {
        let max = (usize::MAX / 2) as u64;
        if count > max {
            return Err(Error::Misuse(format!(
                "counted barrier {}: count {count} is larger than {max}",
                self.token_name(out)
            )));
        }
        // `count` fake inputs: the arrivals decrement them. Validation and the spawn proper are
        // shared with tasks; the barrier is registered only once the spawn succeeded.
        let record =
            self.spawn_record(out, &mut Vec::new(), &mut [], count as usize, Body::empty())?;
        self.barriers.insert(
            out,
            Counted {
                record,
                count,
                arrivals: 0,
            },
        );
        self.release(record, 0);
        self.help_if_ahead();
        Ok(())
    }

    /// Spawns a task producing `out` (stream id, slot index) that waits for `inputs` (sorted and
    /// deduplicated here) and, when it finishes, arrives at the counted barriers `arrivals`
    /// (each entry is one arrival). The task may start before this returns.
    pub(crate) fn spawn(
        &mut self,
        out: (u32, usize),
        inputs: &mut Vec<(u32, usize)>,
        arrivals: &mut [(u32, usize)],
        body: Body<'env>,
    ) -> Result<(), Error> {
        let task = self.spawn_record(out, inputs, arrivals, 0, body)?;
        let satisfied = self.register_inputs(task, inputs);
        self.release(task, satisfied);
        self.help_if_ahead();
        Ok(())
    }

    fn token_name(&self, (stream, idx): (u32, usize)) -> String {
        self.streams[stream as usize].token_name(idx)
    }

    /// Validates a spawn and sets up its record (`extra` more to count down than inputs, for a
    /// counted barrier), with the guard held: nothing is published yet. On error nothing
    /// changed.
    fn spawn_record(
        &mut self,
        out: (u32, usize),
        inputs: &mut Vec<(u32, usize)>,
        arrivals: &mut [(u32, usize)],
        extra: usize,
        body: Body<'env>,
    ) -> Result<*mut Task, Error> {
        if self.finished {
            return Err(Error::Misuse(
                "task spawned after the graph ended".to_string(),
            ));
        }
        if self.spawned >= MAX_TASKS {
            return Err(Error::TooManyTasks { max: MAX_TASKS });
        }
        // Validate everything before publishing anything: a failed spawn leaves no trace.
        let in_range = |&(s, idx): &(u32, usize)| {
            self.streams
                .get(s as usize)
                .is_some_and(|st| idx < st.len())
        };
        if !in_range(&out) || !inputs.iter().all(in_range) || !arrivals.iter().all(in_range) {
            return Err(Error::Misuse(
                "internal: unchecked stream or key in spawn".to_string(),
            ));
        }
        if self.is_claimed(out.0, out.1) {
            let token = self.streams[out.0 as usize].token_name(out.1);
            return Err(Error::ProducedTwice { token });
        }
        arrivals.sort_unstable();
        for group in arrivals.chunk_by(|a, b| a == b) {
            let barrier = group[0];
            let Some(b) = self.barriers.get(&barrier) else {
                return Err(Error::Misuse(format!(
                    "task {} arrives at {}, which is not a counted barrier declared before it \
                     (tf_barrier_counted)",
                    self.token_name(out),
                    self.token_name(barrier)
                )));
            };
            if b.arrivals + group.len() as u64 > b.count {
                return Err(Error::Misuse(format!(
                    "task {} arrives at the counted barrier {} beyond its count of {}",
                    self.token_name(out),
                    self.token_name(barrier),
                    b.count
                )));
            }
        }
        self.claimed[out.0 as usize][out.1 / 64] |= 1 << (out.1 % 64);
        inputs.sort_unstable();
        inputs.dedup();

        let n_inputs = inputs.len();
        // SAFETY (for the erasure): `Core::finish` runs or drops every body before the core is
        // dropped, and a `Core<'env>` is never leaked (see the type doc).
        let body = unsafe { body.erase() };
        let task = self.pool.take(&self.state);
        // SAFETY: a vacant record from the pool: the control thread owns it until the guard
        // release below, and no node of it is published.
        unsafe {
            (*task)
                .missing
                .store(n_inputs + extra + 1, Ordering::Relaxed);
            (*task).link = ptr::null_mut();
            (*task).graph = Arc::as_ptr(&self.state);
            (*task).stream = Arc::as_ptr(&self.streams[out.0 as usize]);
            (*task).idx = out.1;
            (*task).body = Some(body);
            (*task).n_waits = n_inputs;
            if n_inputs > INLINE_WAITS {
                (*task).spill.clear();
                (*task).spill.resize(n_inputs, WaitNode::NONE);
            }
            (*task).arrive.clear();
        }
        for barrier in arrivals.iter() {
            let b = self
                .barriers
                .get_mut(barrier)
                .expect("arrival at a counted barrier checked above");
            b.arrivals += 1;
            // SAFETY: as above. The barrier's record is alive: it has fewer than `count`
            // arrivals, so it cannot have run.
            unsafe { (*task).arrive.push(b.record) };
        }
        self.spawned += 1;
        Ok(task)
    }

    /// Pushes the waiter nodes of the registering record `task` for `inputs`; returns how many
    /// inputs were found produced already.
    fn register_inputs(&mut self, task: *mut Task, inputs: &[(u32, usize)]) -> usize {
        let mut satisfied = 0;
        for (i, &(s, idx)) in inputs.iter().enumerate() {
            let slot = &self.streams[s as usize].slots[idx];
            // SAFETY: `i < n_waits`, set by `spawn_record`; our guard in `missing` keeps the
            // record ours, and node `i` is not published yet.
            if unsafe { wait_on(slot, task, Task::node(task, i)) } {
                satisfied += 1;
            }
        }
        satisfied
    }

    /// Releases the guard of the registering record `task` together with `satisfied` inputs
    /// found produced; pushes the task if that made it ready.
    fn release(&mut self, task: *mut Task, satisfied: usize) {
        // SAFETY: the guard keeps the record ours up to this decrement.
        if unsafe { release_guard(task, satisfied) } {
            // SAFETY: records are never null.
            let t = TaskRef(unsafe { NonNull::new_unchecked(task) });
            let n = self.rt.n_threads();
            if n == 1 || self.rt.queued() > HELP_AHEAD as usize * n {
                // Ahead of the workers (or alone): run it here, with no deque operation and no
                // shared counter update before it; a successor it makes ready is queued.
                if let Some(next) = t.run_inline(&self.rt) {
                    self.rt.push(&Sink::Global, next);
                    self.rt.notify_work(1);
                }
            } else {
                // Count it active before it can run (the push publishes the increment).
                self.state.activate_one();
                self.rt.push(&Sink::Global, t);
                self.rt.notify_work(1);
            }
        }
    }

    /// The spawning thread helps when it is ahead: when more of this graph's tasks are ready or
    /// running than a small multiple of the thread count, it runs ready tasks until that is no
    /// longer so. Checked after every spawn on a single thread (tasks then run as soon as they
    /// are ready, in program order where they can), every [`HELP_PERIOD`] spawns otherwise (the
    /// graph word is shared with the workers).
    fn help_if_ahead(&mut self) {
        let n = self.rt.n_threads() as u64;
        if n > 1 && self.spawned & (HELP_PERIOD - 1) != 0 {
            return;
        }
        let limit = if n == 1 { 0 } else { HELP_AHEAD * n };
        self.rt.help(&self.state, limit);
    }

    /// Runs tasks until every spawned task finished (or none can make progress), then reports the
    /// first panic of a body or the tasks that can never run. Idempotent: later calls return
    /// `Ok(())`. After it returns, no thread touches this graph's tasks or streams.
    pub(crate) fn finish(&mut self) -> Result<(), Error> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        // A panic escaping the wait would drop the streams under running tasks: make it fatal.
        let guard = crate::runtime::FatalOnUnwind("waiting for the end of a graph");
        let end = self.rt.wait_graph(&self.state, self.spawned);
        let stuck = match end {
            GraphEnd::Done => None,
            GraphEnd::Stuck => Some(self.reclaim_stuck()),
        };
        std::mem::forget(guard);
        if self.rt.obs.on {
            self.rt.obs.graph_end(self.began);
        }
        if let Some((task, message)) = self.state.take_panic() {
            return Err(Error::TaskPanicked { task, message });
        }
        match stuck {
            Some(report) => Err(Error::Stuck(report)),
            None => Ok(()),
        }
    }

    /// Lists and frees the tasks of a graph that can make no more progress.
    fn reclaim_stuck(&mut self) -> StuckReport {
        let (finished, active) = self.state.snapshot();
        // `wait_graph` returned Stuck: no task is ready or running and none can be spawned, so no
        // other thread touches this graph's tasks or slots any more.
        assert_eq!(active, 0, "reclaim_stuck with active tasks");
        let mut waits: Vec<(u32, usize, u32, usize)> = Vec::new();
        let mut tasks: Vec<*mut Task> = Vec::new();
        for stream in &self.streams {
            for (idx, slot) in stream.slots.iter().enumerate() {
                let word = slot.load(Ordering::Acquire);
                if word == EMPTY || word == PRODUCED {
                    continue;
                }
                let mut node = word.cast::<WaitNode>();
                while !node.is_null() {
                    // SAFETY: quiescent graph (above): every node in a list belongs to a task that
                    // never ran, so it is alive; nothing else reads or writes it.
                    let (next, task) = unsafe { ((*node).next, (*node).task) };
                    // SAFETY: as above.
                    let (task_stream, task_idx) = unsafe { ((*(*task).stream).id, (*task).idx) };
                    waits.push((task_stream, task_idx, stream.id, idx));
                    tasks.push(task);
                    node = next;
                }
            }
        }
        tasks.sort_unstable();
        tasks.dedup();
        // Counted barriers wait for arrivals, not in slot lists: those not produced are stuck.
        let mut barriers: Vec<(u32, usize, u64, u64)> = self
            .barriers
            .iter()
            .filter(|(&(s, idx), _)| {
                self.streams[s as usize].slots[idx].load(Ordering::Acquire) != PRODUCED
            })
            .map(|(&(s, idx), b)| (s, idx, b.count, b.arrivals))
            .collect();
        barriers.sort_unstable();
        debug_assert_eq!(
            (tasks.len() + barriers.len()) as u64,
            self.spawned - finished
        );
        let n_tasks = tasks.len() + barriers.len();
        for task in tasks {
            // SAFETY: quiescent graph (above); each stuck task's body is dropped once
            // (deduplicated), unrun. The records are freed with the pool.
            drop(unsafe { (*task).body.take() });
        }
        for stream in &self.streams {
            for slot in stream.slots.iter() {
                if slot.load(Ordering::Relaxed) != PRODUCED {
                    slot.store(EMPTY, Ordering::Relaxed);
                }
            }
        }
        waits.sort_unstable();
        let n_waits = waits.len();
        let waits = waits
            .into_iter()
            .take(StuckReport::MAX_LISTED)
            .map(|(ts, ti, ks, ki)| StuckWait {
                task: self.streams[ts as usize].token_name(ti),
                token: self.streams[ks as usize].token_name(ki),
                has_producer: self.is_claimed(ks, ki),
            })
            .collect();
        let barriers = barriers
            .into_iter()
            .take(StuckReport::MAX_LISTED)
            .map(|(s, idx, count, arrivals)| StuckBarrier {
                barrier: self.streams[s as usize].token_name(idx),
                count,
                arrivals,
            })
            .collect();
        StuckReport {
            n_tasks,
            n_waits,
            waits,
            barriers,
        }
    }
}

impl Drop for Core<'_> {
    fn drop(&mut self) {
        // Errors are reported by `Graph`; here only the guarantee matters: no task outlives us.
        let _ = self.finish();
        // SAFETY: `finish` returned: no thread touches this graph's records any more (a task
        // gives its record back before its final graph word update, which `finish` waited for).
        unsafe { self.pool.free_all() };
    }
}

// The steps of the dependence protocol (README.md), as free functions so that the model test
// (`loom_model`) runs exactly the code the runtime runs.

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

/// A counted barrier, as the control thread tracks it.
struct Counted {
    /// Its record: alive while `arrivals < count` (it cannot have run); not used afterwards.
    record: *mut Task,
    count: u64,
    /// Arrivals declared so far (by spawned tasks), at most `count`.
    arrivals: u64,
}

// SAFETY: only the control thread uses `record` (see the field's doc).
unsafe impl Send for Counted {}

/// How many of a graph's spawns pass between two checks of whether the control thread is
/// ahead (on more than one thread). A power of two.
const HELP_PERIOD: u64 = 16;
/// The control thread helps when more than `HELP_AHEAD * n_threads` tasks are ready or running.
const HELP_AHEAD: u64 = 2;

/// The control thread's side of a graph's pool of task records.
///
/// Records are allocated in chunks, taken by [`Core::spawn`], given back by the thread that runs
/// the task (to [`GraphState`]'s `returned` stack) and reused, so that a graph holds about as
/// many records as it has tasks not yet run at once, and spawning rarely allocates. Chunks are
/// freed with the graph.
#[derive(Default)]
struct Pool {
    /// Vacant records owned by the control thread (linked by `Task::link`).
    free: *mut Task,
    /// Every chunk: its first record and length (from `Box<[Task]>::into_raw`).
    chunks: Vec<(*mut Task, usize)>,
}

// SAFETY: the pool's records are owned by whoever owns the graph (the control thread); moving
// the graph to another thread moves that ownership with it.
unsafe impl Send for Pool {}

impl Pool {
    const FIRST_CHUNK: usize = 64;
    const MAX_CHUNK: usize = 4096;

    /// A vacant record: from the control thread's free list, else from those given back, else
    /// from a new chunk.
    fn take(&mut self, state: &GraphState) -> *mut Task {
        if self.free.is_null() {
            // Acquire: the threads that gave the records back are done with them.
            self.free = state.returned.swap(ptr::null_mut(), Ordering::Acquire);
            if self.free.is_null() {
                self.grow();
            }
        }
        let t = self.free;
        // SAFETY: records in the free list are vacant and owned by the control thread.
        self.free = unsafe { (*t).link };
        t
    }

    fn grow(&mut self) {
        let len = self
            .chunks
            .last()
            .map_or(Self::FIRST_CHUNK, |&(_, n)| (2 * n).min(Self::MAX_CHUNK));
        let chunk: Box<[Task]> = (0..len).map(|_| Task::vacant()).collect();
        let first = Box::into_raw(chunk).cast::<Task>();
        for i in (0..len).rev() {
            // SAFETY: `i < len`, a record of the chunk we just allocated and own.
            unsafe {
                let t = first.add(i);
                (*t).link = self.free;
                self.free = t;
            }
        }
        self.chunks.push((first, len));
    }

    /// Frees every chunk.
    ///
    /// # Safety
    /// No thread accesses any record of this pool any more, and the pool is not used afterwards.
    unsafe fn free_all(&mut self) {
        self.free = ptr::null_mut();
        for (first, len) in self.chunks.drain(..) {
            // SAFETY: from `Box::into_raw` of a `Box<[Task]>` of this length, freed once.
            drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(first, len)) });
        }
    }
}
