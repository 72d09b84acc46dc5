//! The thread pool: workers, their work-stealing deques, sleeping and waking, the end-of-graph
//! wait of the control thread.
//!
//! A [`Runtime`] with `n` threads starts `n - 1` workers; the control thread of a graph is the
//! n-th thread while it waits in [`crate::Graph::wait`]. Each worker owns a LIFO
//! [`crossbeam_deque::Worker`]: the tasks it makes ready go there, and other threads steal from
//! the other end. The control thread pushes the tasks it makes ready to the shared
//! [`Injector`]. Idle threads sleep on one condition variable; the sleep/wake protocol is
//! described in the crate's `README.md` (section "Sleeping").
//!
//! Several graphs may run at once on one runtime (from different control threads): the deques
//! hold tasks of any graph, and a control thread may run tasks of other graphs while it waits.

#![forbid(unsafe_code)]

use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::{self, JoinHandle};

use crossbeam_deque::{Injector, Steal, Stealer, Worker};

use crate::observe::Observer;
use crate::task::{GraphState, TaskRef};
use crate::{Error, Observe};

/// The largest thread count a runtime accepts.
pub const MAX_THREADS: usize = 1024;

/// Name of the environment variable that sets the thread count.
pub const THREADS_ENV: &str = "TILEDFLOW_NUM_THREADS";

/// How many times an idle worker looks for work (yielding in between) before it sleeps.
const SPIN_ROUNDS: usize = 32;

/// A pool of worker threads on which graphs run.
///
/// Dropping it stops the workers once they are idle; graphs still alive then finish on their
/// control thread alone.
pub struct Runtime {
    inner: Arc<Inner>,
    workers: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("n_threads", &self.inner.n_threads)
            .finish()
    }
}

impl Runtime {
    /// A runtime with `n_threads` threads in all (the control thread included): it starts
    /// `n_threads - 1` workers.
    pub fn new(n_threads: usize) -> Result<Runtime, Error> {
        Runtime::with_observe(n_threads, &Observe::default())
    }

    /// A runtime with `n_threads` threads that records what `observe` asks for (a trace file,
    /// statistics).
    pub fn with_observe(n_threads: usize, observe: &Observe) -> Result<Runtime, Error> {
        if n_threads == 0 || n_threads > MAX_THREADS {
            return Err(Error::BadThreadCount {
                value: n_threads.to_string(),
                max: MAX_THREADS,
            });
        }
        let locals: Vec<Worker<TaskRef>> = (1..n_threads).map(|_| Worker::new_lifo()).collect();
        let inner = Arc::new(Inner {
            injector: Injector::new(),
            stealers: locals.iter().map(Worker::stealer).collect(),
            n_threads,
            sleep: Sleep::default(),
            obs: Observer::new(observe, n_threads)?,
        });
        let mut rt = Runtime {
            inner,
            workers: Vec::with_capacity(n_threads - 1),
        };
        for (index, local) in locals.into_iter().enumerate() {
            let inner = Arc::clone(&rt.inner);
            let handle = thread::Builder::new()
                .name(format!("streamrt-worker-{index}"))
                .spawn(move || worker_main(&inner, &local, index))
                // Dropping `rt` stops the workers started so far.
                .map_err(|source| Error::SpawnWorker { index, source })?;
            rt.workers.push(handle);
        }
        Ok(rt)
    }

    /// A runtime whose thread count is [`threads_from_env`] and whose trace and statistics are
    /// [`Observe::from_env`] (`TILEDFLOW_TRACE`, `TILEDFLOW_STATS`).
    pub fn from_env() -> Result<Runtime, Error> {
        Runtime::with_observe(threads_from_env()?, &Observe::from_env()?)
    }

    /// The process-wide runtime used by the C ABI, started on first use from the environment.
    pub fn global() -> Result<&'static Runtime, Error> {
        static GLOBAL: OnceLock<Runtime> = OnceLock::new();
        if let Some(rt) = GLOBAL.get() {
            return Ok(rt);
        }
        let rt = Runtime::from_env()?;
        // If another thread won the race, our runtime is dropped (its workers stop).
        Ok(GLOBAL.get_or_init(|| rt))
    }

    /// Number of threads, the control thread included.
    pub fn n_threads(&self) -> usize {
        self.inner.n_threads
    }

    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        {
            let _lock = self.inner.sleep.lock();
            self.inner.sleep.shutdown.store(true, Ordering::Relaxed);
            self.inner.sleep.cv.notify_all();
        }
        for handle in self.workers.drain(..) {
            // A worker that panicked already ended the process (`worker_main`).
            let _ = handle.join();
        }
    }
}

/// The thread count from `TILEDFLOW_NUM_THREADS`, or the number of available cores if it is
/// unset.
pub fn threads_from_env() -> Result<usize, Error> {
    match std::env::var(THREADS_ENV) {
        Ok(text) => match text.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
            _ => Err(Error::BadThreadCount {
                value: text,
                max: MAX_THREADS,
            }),
        },
        Err(std::env::VarError::NotPresent) => Ok(thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS)),
        Err(std::env::VarError::NotUnicode(text)) => Err(Error::BadThreadCount {
            value: text.to_string_lossy().into_owned(),
            max: MAX_THREADS,
        }),
    }
}

/// Where the tasks made ready by a finishing task go.
pub(crate) enum Sink<'a> {
    /// The running worker's own deque, and the worker's slot (`1 + index`, for the observer).
    Local(&'a Worker<TaskRef>, usize),
    /// The shared injector (control threads, slot 0).
    Global,
}

impl Sink<'_> {
    /// The running thread's slot in the observer: 0 for control threads, `1 + i` for worker `i`.
    pub(crate) fn slot(&self) -> usize {
        match self {
            Sink::Local(_, slot) => *slot,
            Sink::Global => 0,
        }
    }
}

/// How the end-of-graph wait ended.
pub(crate) enum GraphEnd {
    /// Every spawned task finished.
    Done,
    /// Some tasks remain, none is ready or running: they can never run.
    Stuck,
}

/// The shared part of a runtime, referenced by its workers and its graphs.
pub(crate) struct Inner {
    injector: Injector<TaskRef>,
    stealers: Box<[Stealer<TaskRef>]>,
    n_threads: usize,
    sleep: Sleep,
    /// Trace and statistics (both off unless asked for).
    pub(crate) obs: Observer,
}

/// Sleep state: one mutex and condition variable for all idle threads.
///
/// `sleepers` counts threads between their registration (under the mutex) and their wake-up;
/// `control_sleepers` those of them that are control threads waiting for their graph. A thread
/// registers, then issues a SeqCst fence, then checks for work (and, for a control thread, its
/// graph word) before waiting; a thread that publishes work (or makes a graph idle) issues a
/// SeqCst fence after publishing and then reads the counter. One of the two sees the other's
/// write, and notifications are sent under the mutex, which the sleeper holds from its
/// registration until `wait` releases it: no wake-up is lost.
#[derive(Default)]
struct Sleep {
    mutex: Mutex<()>,
    cv: Condvar,
    shutdown: AtomicBool,
    sleepers: AtomicUsize,
    control_sleepers: AtomicUsize,
}

impl Sleep {
    fn lock(&self) -> MutexGuard<'_, ()> {
        self.mutex.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, ()>) -> MutexGuard<'a, ()> {
        self.cv.wait(guard).unwrap_or_else(PoisonError::into_inner)
    }
}

impl Inner {
    /// Number of threads, the control thread included.
    pub(crate) fn n_threads(&self) -> usize {
        self.n_threads
    }

    /// Hands a ready task to `sink`. The caller then calls [`Inner::notify_work`].
    pub(crate) fn push(&self, sink: &Sink<'_>, task: TaskRef) {
        match sink {
            Sink::Local(local, _) => local.push(task),
            Sink::Global => self.injector.push(task),
        }
    }

    /// About how many tasks wait in the shared injector.
    pub(crate) fn queued(&self) -> usize {
        self.injector.len()
    }

    /// Wakes up to `n` sleeping threads after `n` tasks were pushed.
    pub(crate) fn notify_work(&self, n: u64) {
        fence(Ordering::SeqCst);
        let sleepers = self.sleep.sleepers.load(Ordering::Relaxed);
        if sleepers == 0 {
            return;
        }
        let _lock = self.sleep.lock();
        for _ in 0..n.min(sleepers as u64) {
            self.sleep.cv.notify_one();
        }
    }

    /// Wakes the sleeping control threads after a graph's active count dropped to zero (its
    /// end, or the point where it is stuck).
    pub(crate) fn notify_graph_idle(&self) {
        fence(Ordering::SeqCst);
        if self.sleep.control_sleepers.load(Ordering::Relaxed) == 0 {
            return;
        }
        let _lock = self.sleep.lock();
        self.sleep.cv.notify_all();
    }

    /// Whether some deque or the injector holds a task.
    fn has_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty())
    }

    /// A task for worker `me`: its own deque first, then the injector, then other workers.
    fn find_work_worker(
        &self,
        local: &Worker<TaskRef>,
        me: usize,
        rng: &mut XorShift,
    ) -> Option<TaskRef> {
        if let Some(t) = local.pop() {
            return Some(t);
        }
        loop {
            let mut retry = false;
            match self.injector.steal_batch_and_pop(local) {
                Steal::Success(t) => return Some(t),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            let n = self.stealers.len();
            let start = rng.below(n);
            for i in 0..n {
                let victim = (start + i) % n;
                if victim == me {
                    continue;
                }
                match self.stealers[victim].steal_batch_and_pop(local) {
                    Steal::Success(t) => {
                        if self.obs.on {
                            self.obs.steal(me + 1);
                        }
                        return Some(t);
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// A task for a control thread: the injector first, then the workers' deques.
    fn find_work_control(&self) -> Option<TaskRef> {
        loop {
            let mut retry = false;
            match self.injector.steal() {
                Steal::Success(t) => return Some(t),
                Steal::Retry => retry = true,
                Steal::Empty => {}
            }
            for stealer in self.stealers.iter() {
                match stealer.steal() {
                    Steal::Success(t) => {
                        if self.obs.on {
                            self.obs.steal(0);
                        }
                        return Some(t);
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// The control thread's end-of-graph wait: runs tasks (of any graph) until the graph word
    /// says every one of the `spawned` tasks finished, or that none is ready or running.
    pub(crate) fn wait_graph(&self, state: &GraphState, spawned: u64) -> GraphEnd {
        // A task made ready by the last task this thread ran, to run next.
        let mut next: Option<TaskRef> = None;
        loop {
            let (finished, active) = state.snapshot();
            if finished == spawned {
                // `next` belongs to another graph (all of ours finished): hand it over.
                if let Some(task) = next {
                    self.push(&Sink::Global, task);
                    self.notify_work(1);
                }
                return GraphEnd::Done;
            }
            if active == 0 {
                // No task of this graph is ready or running and no more can be spawned: nothing
                // will ever decrement the counters of the remaining ones. A held `next` belongs
                // to another graph (one of ours would count as active): hand it over.
                if let Some(task) = next {
                    self.push(&Sink::Global, task);
                    self.notify_work(1);
                }
                return GraphEnd::Stuck;
            }
            if let Some(task) = next.take().or_else(|| self.find_work_control()) {
                next = task.run(self, &Sink::Global);
                continue;
            }
            self.sleep_control(state, spawned);
        }
    }

    /// The control thread, between spawns: runs ready tasks while more than `limit` tasks of its
    /// graph are ready or running (it is ahead of the workers).
    pub(crate) fn help(&self, state: &GraphState, limit: u64) {
        let mut next: Option<TaskRef> = None;
        loop {
            let (_, active) = state.snapshot();
            if active <= limit {
                break;
            }
            match next.take().or_else(|| self.find_work_control()) {
                Some(task) => next = task.run(self, &Sink::Global),
                None => break,
            }
        }
        if let Some(task) = next {
            self.push(&Sink::Global, task);
            self.notify_work(1);
        }
    }

    /// Sleeps until there may be work or the graph's active count reached zero.
    fn sleep_control(&self, state: &GraphState, spawned: u64) {
        let sleep = &self.sleep;
        let guard = sleep.lock();
        sleep.sleepers.fetch_add(1, Ordering::SeqCst);
        sleep.control_sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let (finished, active) = state.snapshot();
        let guard = if finished == spawned || active == 0 || self.has_work() {
            guard
        } else if self.obs.on {
            let since = self.obs.now();
            let guard = sleep.wait(guard);
            self.obs.idle(0, since);
            guard
        } else {
            sleep.wait(guard)
        };
        sleep.control_sleepers.fetch_sub(1, Ordering::Relaxed);
        sleep.sleepers.fetch_sub(1, Ordering::Relaxed);
        drop(guard);
    }

    /// Sleeps until there may be work. Returns `false` when the runtime shuts down.
    fn sleep_worker(&self) -> bool {
        let sleep = &self.sleep;
        let guard = sleep.lock();
        if sleep.shutdown.load(Ordering::Relaxed) {
            return false;
        }
        sleep.sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let guard = if self.has_work() {
            guard
        } else {
            sleep.wait(guard)
        };
        sleep.sleepers.fetch_sub(1, Ordering::Relaxed);
        drop(guard);
        true
    }
}

/// A worker thread's life: run tasks, spin briefly when idle, then sleep.
fn worker_main(inner: &Inner, local: &Worker<TaskRef>, index: usize) {
    let fatal_guard = FatalOnUnwind("running a worker thread");
    let mut rng = XorShift::new(index as u64 + 1);
    let sink = Sink::Local(local, index + 1);
    // When observing: since when this worker has been without work.
    let mut idle_since: Option<u64> = None;
    'work: loop {
        if let Some(mut task) = inner.find_work_worker(local, index, &mut rng) {
            if let Some(since) = idle_since.take() {
                inner.obs.idle(index + 1, since);
            }
            // Run the chain of tasks that each finishing task makes ready first.
            while let Some(next) = task.run(inner, &sink) {
                task = next;
            }
            continue;
        }
        if inner.obs.on && idle_since.is_none() {
            idle_since = Some(inner.obs.now());
        }
        for _ in 0..SPIN_ROUNDS {
            thread::yield_now();
            if !inner.has_work() {
                continue;
            }
            continue 'work;
        }
        if !inner.sleep_worker() {
            break;
        }
    }
    std::mem::forget(fatal_guard);
}

/// Ends the process with a fatal error if dropped: armed around code whose unwinding would
/// leave tasks running on freed memory (a panic there is a runtime bug). Disarm with
/// `mem::forget`.
pub(crate) struct FatalOnUnwind(pub(crate) &'static str);

impl Drop for FatalOnUnwind {
    fn drop(&mut self) {
        crate::fatal(format_args!("internal error (a panic) while {}", self.0));
    }
}

/// A small xorshift generator for picking steal victims.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A value in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        if n == 0 {
            0
        } else {
            (self.0 % n as u64) as usize
        }
    }
}
