//! The safe Rust API of one dataflow graph: declaring streams, spawning tasks, waiting.
//!
//! [`Graph`] validates every stream id and key against the declared boxes and turns mistakes
//! into [`Error`]s that name the task and key; the dependence protocol itself lives in
//! [`crate::task`]. The C ABI ([`crate::ffi`]) is a thin layer over the `begin_task` /
//! `add_input` / `end_task` trio here.
//!
//! Threads: a graph is driven by one thread at a time (the *control thread*: every method takes
//! `&mut self`); task bodies run on the runtime's workers and on the control thread in
//! [`Graph::wait`].

#![forbid(unsafe_code)]

use std::fmt;
use std::sync::Arc;

use crate::stream::format_key;
use crate::task::{Body, Core};
use crate::{Error, Runtime};

/// A stream of one graph: its position in declaration order (0, 1, 2, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(u32);

impl StreamId {
    /// The position of the stream in declaration order.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stream #{}", self.0)
    }
}

/// One dataflow graph: streams of tokens and tasks that wait for tokens and produce one each.
///
/// Tasks are spawned in program order; a task may wait for a token whose producer is spawned
/// later. Tokens are never consumed: a produced token satisfies every reader, earlier or later.
/// `'env` bounds what task bodies may borrow: [`Graph::new`] gives a `Graph<'static>` (bodies
/// own their data), [`scope`] a graph whose bodies may borrow from the caller.
///
/// Dropping a graph without [`Graph::wait`] still waits for its tasks (and prints an error
/// that `wait` would have returned).
pub struct Graph<'env> {
    core: Core<'env>,
    /// The task being described by `begin_task` ... `end_task` (C ABI).
    open: Option<OpenTask<'env>>,
    /// The open task's inputs (kept between tasks to reuse the allocation).
    inputs: Vec<(u32, usize)>,
    /// The open task's arrivals at counted barriers (likewise).
    arrivals: Vec<(u32, usize)>,
    ended: bool,
}

struct OpenTask<'env> {
    out: (u32, usize),
    body: Body<'env>,
}

impl Graph<'static> {
    /// A new graph on `rt` whose task bodies own their data.
    pub fn new(rt: &Runtime) -> Graph<'static> {
        Graph::from_core(Core::new(Arc::clone(rt.inner())))
    }
}

/// Runs `f` with a new graph on `rt` whose task bodies may borrow data that outlives this call,
/// then waits for every task, as [`Graph::wait`] does.
///
/// If `f` panics, the tasks spawned so far are still waited for before the panic goes on.
pub fn scope<'env, R>(rt: &Runtime, f: impl FnOnce(&mut Graph<'env>) -> R) -> Result<R, Error> {
    let mut graph = Graph::from_core(Core::new(Arc::clone(rt.inner())));
    let result = f(&mut graph);
    graph.wait()?;
    Ok(result)
}

impl<'env> Graph<'env> {
    fn from_core(core: Core<'env>) -> Graph<'env> {
        Graph {
            core,
            open: None,
            inputs: Vec::new(),
            arrivals: Vec::new(),
            ended: false,
        }
    }

    /// Number of threads of the runtime, the control thread included.
    pub fn n_threads(&self) -> usize {
        self.core.runtime().n_threads()
    }

    /// Declares a stream named `name` (used in messages) whose keys are the points of the box
    /// `lo[d] <= key[d] <= hi[d]`; `lo.len()` is its number of dimensions (0 gives a single
    /// key). An empty box is allowed and has no key.
    pub fn stream(&mut self, name: &str, lo: &[i64], hi: &[i64]) -> Result<StreamId, Error> {
        self.declare(name, lo, hi, None)
    }

    /// Like [`Graph::stream`], with the stream's tasks spread over the threads along dimension
    /// `dim`: its range of keys cut into one block per thread (as OpenMP's static schedule cuts
    /// a loop), a ready task of block `t` goes first to thread `t` (0 is the control thread),
    /// which runs it after the tasks it made ready itself; another thread runs it only when it
    /// has nothing else to do. For the tiles of a parallel loop, whose neighbours then run on
    /// one thread, far from the other threads' (pages first touched, cache lines, the blocks a
    /// later stream spread alike reads back).
    pub fn spread_stream(
        &mut self,
        name: &str,
        lo: &[i64],
        hi: &[i64],
        dim: usize,
    ) -> Result<StreamId, Error> {
        self.declare(name, lo, hi, Some(dim))
    }

    fn declare(
        &mut self,
        name: &str,
        lo: &[i64],
        hi: &[i64],
        spread: Option<usize>,
    ) -> Result<StreamId, Error> {
        if lo.len() != hi.len() {
            return Err(Error::Misuse(format!(
                "stream {name}: {} lower bound(s) but {} upper bound(s)",
                lo.len(),
                hi.len()
            )));
        }
        self.core.add_stream(name, lo, hi, spread).map(StreamId)
    }

    /// Spawns a task that runs `body(key)` once every token of `inputs` is produced, and then
    /// produces the token `(out, key)`. Naming a token twice in `inputs` waits once. A task
    /// ready at its spawn is handed to the other threads in a small batch: unless some thread
    /// sleeps, it may wait for up to 15 more spawns of this graph (or the end of the graph), so
    /// long computations between spawns delay the tasks spawned just before them.
    pub fn spawn<F>(
        &mut self,
        out: StreamId,
        key: &[i64],
        inputs: &[(StreamId, &[i64])],
        body: F,
    ) -> Result<(), Error>
    where
        F: FnOnce(&[i64]) + Send + 'env,
    {
        self.spawn_arriving(out, key, inputs, &[], body)
    }

    /// Like [`Graph::spawn`]; in addition, when the task finishes it arrives at each counted
    /// barrier of `arrivals` (declared before with [`Graph::counted_barrier`]; a barrier named
    /// twice receives two arrivals).
    pub fn spawn_arriving<F>(
        &mut self,
        out: StreamId,
        key: &[i64],
        inputs: &[(StreamId, &[i64])],
        arrivals: &[(StreamId, &[i64])],
        body: F,
    ) -> Result<(), Error>
    where
        F: FnOnce(&[i64]) + Send + 'env,
    {
        self.describe(out, key, inputs, arrivals, Body::rust(body))
    }

    /// Declares a soft barrier: the token `(out, key)` is produced, without a task body, once
    /// every token of `inputs` is produced.
    pub fn barrier(
        &mut self,
        out: StreamId,
        key: &[i64],
        inputs: &[(StreamId, &[i64])],
    ) -> Result<(), Error> {
        self.describe(out, key, inputs, &[], Body::empty())
    }

    /// Declares a counted soft barrier: the token `(out, key)` is produced, without a task
    /// body, once `count` tasks spawned after it arrive at it ([`Graph::spawn_arriving`]).
    /// `count` may be computed at run time; 0 produces the token at once. More arrivals than
    /// `count` are refused at spawn; fewer leave the barrier and its readers stuck (reported by
    /// [`Graph::wait`]).
    pub fn counted_barrier(&mut self, out: StreamId, key: &[i64], count: u64) -> Result<(), Error> {
        self.counted_barrier_at(i64::from(out.0), key, count)
    }

    /// Describes and spawns one task (or input barrier) in a single call.
    fn describe(
        &mut self,
        out: StreamId,
        key: &[i64],
        inputs: &[(StreamId, &[i64])],
        arrivals: &[(StreamId, &[i64])],
        body: Body<'env>,
    ) -> Result<(), Error> {
        if self.open.is_some() {
            return Err(Error::Misuse(
                "spawn while another task is being described".to_string(),
            ));
        }
        self.begin_task(i64::from(out.0), key, body)?;
        for &(stream, input_key) in inputs {
            if let Err(e) = self.add_input(i64::from(stream.0), input_key) {
                self.open = None;
                return Err(e);
            }
        }
        for &(stream, barrier_key) in arrivals {
            if let Err(e) = self.add_arrival(i64::from(stream.0), barrier_key) {
                self.open = None;
                return Err(e);
            }
        }
        self.end_task()
    }

    /// Waits until every task has run, running tasks on this thread meanwhile.
    ///
    /// Errors: [`Error::TaskPanicked`] (the first body that panicked; the bodies of tasks that
    /// started after it are skipped), [`Error::Stuck`] (tasks waiting for tokens that are never
    /// produced; they are dropped without running), [`Error::Misuse`] (a task description left
    /// open).
    pub fn wait(mut self) -> Result<(), Error> {
        self.ended = true;
        let open = self.open.take();
        let result = self.core.finish();
        if open.is_some() {
            return Err(Error::Misuse(
                "the graph ended while a task was being described (task_begin without task_end)"
                    .to_string(),
            ));
        }
        result
    }

    /// The number of key dimensions of stream `id`; `context` says where the id was used.
    pub(crate) fn stream_ndims(
        &self,
        id: i64,
        context: &dyn Fn() -> String,
    ) -> Result<usize, Error> {
        self.stream_of(id, context)
            .map(crate::stream::Stream::ndims)
    }

    fn stream_of(
        &self,
        id: i64,
        context: &dyn Fn() -> String,
    ) -> Result<&crate::stream::Stream, Error> {
        usize::try_from(id)
            .ok()
            .and_then(|i| self.core.stream(i))
            .ok_or_else(|| Error::UnknownStream {
                id,
                n_streams: self.core.n_streams(),
                context: context(),
            })
    }

    /// The (stream, slot) of `key` in stream `id`, or the error naming what is wrong.
    fn token(
        &self,
        id: i64,
        key: &[i64],
        context: &dyn Fn() -> String,
    ) -> Result<(u32, usize), Error> {
        let stream = self.stream_of(id, context)?;
        if key.len() != stream.ndims() {
            return Err(Error::KeyArity {
                key: format_key(key),
                got: key.len(),
                want: stream.ndims(),
                stream: stream.name().to_string(),
                context: context(),
            });
        }
        match stream.index(key) {
            Some(idx) => Ok((stream.id, idx)),
            None => Err(Error::KeyOutOfBox {
                key: format_key(key),
                bounds: stream.bounds(),
                stream: stream.name().to_string(),
                context: context(),
            }),
        }
    }

    /// Starts describing a task producing `(out, key)` that runs `body`.
    pub(crate) fn begin_task(
        &mut self,
        out: i64,
        key: &[i64],
        body: Body<'env>,
    ) -> Result<(), Error> {
        if self.open.is_some() {
            return Err(Error::Misuse(
                "task_begin while another task is being described (missing task_end)".to_string(),
            ));
        }
        let out = self.token(out, key, &|| "the output of a task".to_string())?;
        self.open = Some(OpenTask { out, body });
        self.inputs.clear();
        self.arrivals.clear();
        Ok(())
    }

    /// Declares the counted barrier `(out, key)` with `count` arrivals.
    pub(crate) fn counted_barrier_at(
        &mut self,
        out: i64,
        key: &[i64],
        count: u64,
    ) -> Result<(), Error> {
        if self.open.is_some() {
            return Err(Error::Misuse(
                "counted barrier declared while a task is being described (missing task_end)"
                    .to_string(),
            ));
        }
        let out = self.token(out, key, &|| "a counted barrier".to_string())?;
        self.core.counted_barrier(out, count)
    }

    /// Adds to the task being described an arrival at the counted barrier `(stream, key)`.
    pub(crate) fn add_arrival(&mut self, stream: i64, key: &[i64]) -> Result<(), Error> {
        let Some(open) = &self.open else {
            return Err(Error::Misuse(
                "task_arrive outside a task description (no task_begin before it)".to_string(),
            ));
        };
        let out = open.out;
        let context = || format!("an arrival of task {}", self.task_name(out));
        let token = self.token(stream, key, &context)?;
        self.arrivals.push(token);
        Ok(())
    }

    /// Adds the input `(stream, key)` to the task being described.
    pub(crate) fn add_input(&mut self, stream: i64, key: &[i64]) -> Result<(), Error> {
        let Some(open) = &self.open else {
            return Err(Error::Misuse(
                "task_input outside a task description (no task_begin before it)".to_string(),
            ));
        };
        let out = open.out;
        let context = || format!("an input of task {}", self.task_name(out));
        let token = self.token(stream, key, &context)?;
        self.inputs.push(token);
        Ok(())
    }

    /// Finishes the description and spawns the task.
    pub(crate) fn end_task(&mut self) -> Result<(), Error> {
        let Some(open) = self.open.take() else {
            return Err(Error::Misuse(
                "task_end outside a task description (no task_begin before it)".to_string(),
            ));
        };
        let result = self
            .core
            .spawn(open.out, &mut self.inputs, &mut self.arrivals, open.body);
        self.inputs.clear();
        self.arrivals.clear();
        result
    }

    fn task_name(&self, (stream, idx): (u32, usize)) -> String {
        self.core
            .stream(stream as usize)
            .map_or_else(String::new, |s| s.token_name(idx))
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        self.open = None;
        if let Err(e) = self.core.finish() {
            if !std::thread::panicking() {
                eprintln!("streamrt: error: graph dropped without wait(): {e}");
            }
        }
    }
}

impl fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("n_streams", &self.core.n_streams())
            .field("task_open", &self.open.is_some())
            .finish_non_exhaustive()
    }
}
