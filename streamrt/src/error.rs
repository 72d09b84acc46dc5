//! The runtime's error type: every way a graph description or a run can go wrong.
//!
//! Each variant names the stream, key or task it concerns, so that the message printed by the C
//! ABI (`streamrt: error: <Display>`) points at the offending spawn. Errors are values in the
//! Rust API; only [`crate::ffi`] turns them into `exit(70)`.

#![forbid(unsafe_code)]

use std::fmt;

/// Everything the runtime reports to its caller.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `TILEDFLOW_NUM_THREADS` (or an explicit thread count) is not a positive integer.
    #[error("invalid thread count {value:?} (TILEDFLOW_NUM_THREADS): expected an integer from 1 to {max}")]
    BadThreadCount {
        /// The rejected text.
        value: String,
        /// The largest accepted count.
        max: usize,
    },
    /// An environment variable of the runtime has a value it does not accept.
    #[error("invalid {var}={value:?}: expected {expected}")]
    BadEnv {
        /// The variable.
        var: &'static str,
        /// The rejected value.
        value: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// The trace file (`TILEDFLOW_TRACE`) cannot be created.
    #[error("cannot create the trace file {path} (TILEDFLOW_TRACE): {source}")]
    Trace {
        /// The file.
        path: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The operating system refused to start a worker thread.
    #[error("cannot start worker thread {index}: {source}")]
    SpawnWorker {
        /// Index of the worker that failed to start.
        index: usize,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A stream was declared with an unsupported number of dimensions.
    #[error("stream {name}: {ndims} dimensions; a stream has 0 to {max} dimensions")]
    BadDims {
        /// The stream's name.
        name: String,
        /// The requested number of dimensions.
        ndims: i64,
        /// The largest supported number ([`crate::MAX_DIMS`]).
        max: usize,
    },
    /// A stream's box holds more keys than the runtime accepts.
    #[error("stream {name}: box {bounds} has too many keys (at most {max})")]
    BoxTooLarge {
        /// The stream's name.
        name: String,
        /// The box, printed as `[lo..=hi, ...]`.
        bounds: String,
        /// The largest accepted number of keys.
        max: usize,
    },
    /// A stream id that the graph did not hand out.
    #[error("unknown stream id {id} in {context}; the graph has {n_streams} stream(s)")]
    UnknownStream {
        /// The rejected id.
        id: i64,
        /// Number of streams declared so far.
        n_streams: usize,
        /// Where the id was used, e.g. `the output of a task`.
        context: String,
    },
    /// A key with the wrong number of values for its stream.
    #[error(
        "key ({key}) has {got} value(s) but stream {stream} has {want} dimension(s) ({context})"
    )]
    KeyArity {
        /// The key as given.
        key: String,
        /// Number of values given.
        got: usize,
        /// The stream's number of dimensions.
        want: usize,
        /// The stream's name.
        stream: String,
        /// Where the key was used.
        context: String,
    },
    /// A key outside the box its stream was declared with.
    #[error("key ({key}) is outside the box {bounds} of stream {stream} ({context})")]
    KeyOutOfBox {
        /// The key as given.
        key: String,
        /// The stream's box, printed as `[lo..=hi, ...]`.
        bounds: String,
        /// The stream's name.
        stream: String,
        /// Where the key was used.
        context: String,
    },
    /// Two tasks with the same output token.
    #[error("token {token} is produced twice: a task producing it was already spawned")]
    ProducedTwice {
        /// The token, printed as `stream(key)`.
        token: String,
    },
    /// Calls in an order the API does not allow (an input outside a task description, ...).
    #[error("API misuse: {0}")]
    Misuse(String),
    /// A launch graph of the GPU path (`tf_gpu_*`) was misused or failed on the device; the
    /// message names the task (stream and key) and the kernel.
    #[error("GPU: {0}")]
    Gpu(String),
    /// More tasks in one graph than the completion counter can hold.
    #[error("too many tasks in one graph: at most {max}")]
    TooManyTasks {
        /// The largest number of tasks per graph.
        max: u64,
    },
    /// A task body panicked (Rust API only; a C body cannot).
    #[error("task {task} panicked: {message}")]
    TaskPanicked {
        /// The task, printed as `stream(key)`.
        task: String,
        /// The panic's message, when it was a string.
        message: String,
    },
    /// Tasks that can never run: each waits for a token nobody produces, or for one whose
    /// producer is itself stuck (a cycle through a forward reference).
    #[error("{0}")]
    Stuck(StuckReport),
}

/// One waiting relation in a [`StuckReport`]: `task` waits for `token`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StuckWait {
    /// The waiting task, printed as `stream(key)`.
    pub task: String,
    /// The token it waits for, printed as `stream(key)`.
    pub token: String,
    /// Whether a task producing `token` was spawned (it is then stuck itself).
    pub has_producer: bool,
}

/// A counted barrier in a [`StuckReport`]: it never got all its arrivals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StuckBarrier {
    /// The barrier's token, printed as `stream(key)`.
    pub barrier: String,
    /// The arrivals it waits for.
    pub count: u64,
    /// The arrivals declared by spawned tasks (if equal to `count`, some of them are stuck).
    pub arrivals: u64,
}

/// The tasks left waiting when a graph can make no more progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StuckReport {
    /// Number of tasks that can never run.
    pub n_tasks: usize,
    /// Number of (task, token) waiting relations in all.
    pub n_waits: usize,
    /// The first waiting relations in (task stream, task key, token stream, token key) order.
    pub waits: Vec<StuckWait>,
    /// The first counted barriers never produced (they are counted in `n_tasks`).
    pub barriers: Vec<StuckBarrier>,
}

impl StuckReport {
    /// How many waiting relations a report keeps and prints.
    pub const MAX_LISTED: usize = 20;
}

impl fmt::Display for StuckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} task(s) can never run:", self.n_tasks)?;
        for w in &self.waits {
            let why = if w.has_producer {
                "its producer is stuck too"
            } else {
                "no task produces it"
            };
            write!(f, "\n  task {} waits for {} ({why})", w.task, w.token)?;
        }
        for b in &self.barriers {
            write!(
                f,
                "\n  counted barrier {} has {} of its {} arrivals declared",
                b.barrier, b.arrivals, b.count
            )?;
            if b.arrivals == b.count {
                write!(f, " (an arriving task is stuck)")?;
            }
        }
        if self.n_waits > self.waits.len() {
            write!(
                f,
                "\n  ... and {} more waiting input(s)",
                self.n_waits - self.waits.len()
            )?;
        }
        Ok(())
    }
}
