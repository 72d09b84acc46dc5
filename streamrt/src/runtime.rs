//! The thread pool: a [`Runtime`] starts the worker threads around the ready-task queues of
//! module `queues` and runs each worker's loop (find a task, run it and the chain of tasks it
//! makes ready first, spin briefly, sleep).
//!
//! A [`Runtime`] with `n` threads starts `n - 1` workers; the control thread of a graph is the
//! n-th thread while it waits in [`crate::Graph::wait`] (that wait is the control side's, in
//! `task::control`). Several graphs may run at once on one runtime (from different control
//! threads): the deques hold tasks of any graph, and a control thread may run tasks of other
//! graphs while it waits.

#![forbid(unsafe_code)]

use std::sync::{Arc, OnceLock};
use std::thread::{self, JoinHandle};

use crossbeam_deque::Worker;

use crate::observe::Observer;
use crate::queues::{Queues, Sink, XorShift};
use crate::task::TaskRef;
use crate::{Error, FatalOnUnwind, Observe};

/// The largest thread count a runtime accepts.
pub const MAX_THREADS: usize = 1024;

/// Name of the environment variable that sets the thread count.
pub const THREADS_ENV: &str = "TILEDFLOW_NUM_THREADS";

/// A pool of worker threads on which graphs run.
///
/// Dropping it stops the workers once they are idle; graphs still alive then finish on their
/// control thread alone.
pub struct Runtime {
    inner: Arc<Queues<TaskRef>>,
    workers: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("n_threads", &self.inner.n_threads())
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
        let observer = Observer::new(observe, n_threads)?;
        let inner = Arc::new(Queues::new(&locals, n_threads, observer));
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
            rt.inner.place_new_worker(index, &handle);
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
        self.inner.n_threads()
    }

    /// The queues its graphs push ready tasks to.
    pub(crate) fn inner(&self) -> &Arc<Queues<TaskRef>> {
        &self.inner
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.inner.shut_down();
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

/// A worker thread's life: run tasks, spin briefly when idle, then sleep.
fn worker_main(inner: &Queues<TaskRef>, local: &Worker<TaskRef>, index: usize) {
    let fatal_guard = FatalOnUnwind("running a worker thread");
    let mut rng = XorShift::new(index as u64 + 1);
    let sink = Sink::Local(local, index + 1);
    // When observing: since when this worker has been without work.
    let mut idle_since: Option<u64> = None;
    inner.register_worker(index);
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
        if inner.spin(|| false) {
            continue 'work;
        }
        if !inner.sleep_worker(index) {
            break;
        }
    }
    std::mem::forget(fatal_guard);
}
