//! The C ABI declared in `include/streamrt.h`: a thin layer over [`crate::Graph`].
//!
//! Every function catches panics, checks its pointers and the calling thread, and turns any
//! [`Error`] into the message `streamrt: error: <what>` on stderr and `exit(70)`. Ownership:
//! `tf_graph_begin` allocates the graph, `tf_graph_end` frees it; names and keys are copied, so
//! the caller keeps ownership of every pointer it passes; `env` is borrowed until the graph
//! ends. Graphs run on [`Runtime::global`] (thread count from `TILEDFLOW_NUM_THREADS`).
//!
//! The helpers [`current_thread`], [`guard`], [`read_key`] and [`read_stream`] are public for
//! the GPU path's C ABI (crate `streamrt-gpu`), which checks and fails as this one does.

use std::ffi::{c_char, c_int, c_long, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread::{self, ThreadId};

use crate::task::{Body, CTaskFn};
use crate::{Blocks, Error, Graph, Runtime, MAX_DIMS};

/// The opaque `tf_graph` of the C ABI: a graph and the thread that controls it.
pub struct TfGraph {
    graph: Graph<'static>,
    owner: ThreadId,
}

/// The calling thread's id, cached per thread (`thread::current()` costs an atomic reference
/// count on every call, and the check runs on every call of the ABI).
pub fn current_thread() -> ThreadId {
    thread_local! {
        static ID: ThreadId = thread::current().id();
    }
    ID.with(|id| *id)
}

/// Runs `f`, turning an error or a panic into the fatal exit.
pub fn guard<T>(function: &str, f: impl FnOnce() -> Result<T, Error>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => value,
        Ok(Err(error)) => crate::fatal(error),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            crate::fatal(format_args!(
                "internal error (a panic) in {function}: {message}"
            ))
        }
    }
}

/// The graph behind `g`, checked for null and for the calling thread.
///
/// # Safety
/// `g` is null or a pointer returned by `tf_graph_begin` and not yet passed to `tf_graph_end`.
unsafe fn graph<'a>(g: *mut TfGraph, function: &str) -> Result<&'a mut Graph<'static>, Error> {
    // SAFETY: per this function's contract, a non-null `g` is a live graph that only its
    // control thread (checked below) uses, so no other reference to it exists.
    let g = unsafe { g.as_mut() }
        .ok_or_else(|| Error::Misuse(format!("{function} called with a NULL graph")))?;
    if g.owner != current_thread() {
        return Err(Error::Misuse(format!(
            "{function} called from a thread other than the one that called tf_graph_begin"
        )));
    }
    Ok(&mut g.graph)
}

/// The `n` values at `key` (at most [`MAX_DIMS`]) as `i64`s: the caller's array itself where
/// `long` is 64 bits (the LP64 targets), else copied into `buf`. Reading a key runs at every
/// spawn and input; a copy there (through a large `Result`) was a tenth of a spawn's time.
///
/// # Safety
/// `key` is null or points to at least `n` readable `long`s, which stay valid and unchanged
/// while the returned slice is used.
pub unsafe fn read_key<'a>(
    key: *const c_long,
    n: usize,
    buf: &'a mut [i64; MAX_DIMS],
    function: &str,
) -> Result<&'a [i64], Error> {
    let n = n.min(MAX_DIMS);
    if n == 0 {
        return Ok(&[]);
    }
    if key.is_null() {
        return Err(Error::Misuse(format!(
            "{function}: NULL key for a stream with {n} dimension(s)"
        )));
    }
    if std::mem::size_of::<c_long>() == std::mem::size_of::<i64>() {
        // SAFETY: non-null, `n` readable values (the caller's contract), and `long` has the
        // size (and, as an integer type of that size, the layout) of `i64` here.
        return Ok(unsafe { std::slice::from_raw_parts(key.cast::<i64>(), n) });
    }
    // SAFETY: non-null, and the caller provides `n` readable values.
    let values = unsafe { std::slice::from_raw_parts(key, n) };
    for (o, &v) in buf.iter_mut().zip(values) {
        // `long` is 32 bits here.
        #[allow(clippy::useless_conversion)]
        let v = i64::from(v);
        *o = v;
    }
    Ok(&buf[..n])
}

/// Reads a stream declaration's name and box (of `tf_stream_new` and `tf_gpu_stream_new`).
///
/// # Safety
/// `name` is null or a NUL-terminated string; `lo` and `hi` point to `ndims` values each (may be
/// null when `ndims` is 0).
pub unsafe fn read_stream(
    name: *const c_char,
    ndims: c_int,
    lo: *const c_long,
    hi: *const c_long,
    function: &str,
) -> Result<(String, Vec<i64>, Vec<i64>), Error> {
    let name = if name.is_null() {
        "(unnamed)".to_string()
    } else {
        // SAFETY: per this function's contract, a NUL-terminated string.
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    };
    let n = usize::try_from(ndims)
        .ok()
        .filter(|&n| n <= MAX_DIMS)
        .ok_or_else(|| Error::BadDims {
            name: name.clone(),
            ndims: i64::from(ndims),
            max: MAX_DIMS,
        })?;
    let mut buf = [0; MAX_DIMS];
    // SAFETY: per this function's contract, `n` values each.
    let lo = unsafe { read_key(lo, n, &mut buf, &format!("{function} (lo)")) }?.to_vec();
    // SAFETY: as above.
    let hi = unsafe { read_key(hi, n, &mut buf, &format!("{function} (hi)")) }?.to_vec();
    Ok((name, lo, hi))
}

/// Starts the global runtime (its worker threads) now if it has not started yet; it starts on
/// the first `tf_graph_begin` otherwise. Generated programs call it before `main`, so that the
/// threads' start is not paid inside the first SCoP.
#[no_mangle]
pub extern "C" fn tf_runtime_start() {
    guard("tf_runtime_start", || {
        crash::install();
        Runtime::global().map(|_| ())
    })
}

/// The number of threads the global runtime runs tasks on, the control thread included
/// (starting it on first use): how many blocks a stream declared with `tf_stream_new_spread`
/// is cut into.
#[no_mangle]
pub extern "C" fn tf_num_threads() -> c_int {
    guard("tf_num_threads", || {
        crash::install();
        let n = Runtime::global()?.n_threads();
        Ok(c_int::try_from(n).unwrap_or(c_int::MAX))
    })
}

/// Creates a graph on the global runtime (starting it on first use). The graph must be ended
/// with `tf_graph_end` on the same thread.
#[no_mangle]
pub extern "C" fn tf_graph_begin() -> *mut TfGraph {
    guard("tf_graph_begin", || {
        crash::install();
        let rt = Runtime::global()?;
        let g = TfGraph {
            graph: Graph::new(rt),
            owner: current_thread(),
        };
        Ok(Box::into_raw(Box::new(g)))
    })
}

/// Declares a stream; returns its id (0, 1, 2, ... in declaration order).
///
/// # Safety
/// `g` comes from `tf_graph_begin`; `name` is null or a NUL-terminated string; `lo` and `hi`
/// point to `ndims` values each (may be null when `ndims` is 0).
#[no_mangle]
pub unsafe extern "C" fn tf_stream_new(
    g: *mut TfGraph,
    name: *const c_char,
    ndims: c_int,
    lo: *const c_long,
    hi: *const c_long,
) -> c_int {
    guard("tf_stream_new", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_stream_new") }?;
        // SAFETY: per this function's contract.
        let (name, lo, hi) = unsafe { read_stream(name, ndims, lo, hi, "tf_stream_new") }?;
        let id = graph.stream(&name, &lo, &hi)?;
        c_int::try_from(id.index())
            .map_err(|_| Error::Misuse(format!("too many streams (at most {})", c_int::MAX)))
    })
}

/// Declares a stream as `tf_stream_new` does, its tasks spread over the threads along dimension
/// `dim` ([`Graph::spread_stream`]).
///
/// # Safety
/// As `tf_stream_new`.
#[no_mangle]
pub unsafe extern "C" fn tf_stream_new_spread(
    g: *mut TfGraph,
    name: *const c_char,
    ndims: c_int,
    lo: *const c_long,
    hi: *const c_long,
    dim: c_int,
) -> c_int {
    guard("tf_stream_new_spread", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_stream_new_spread") }?;
        // SAFETY: per this function's contract.
        let (name, lo, hi) = unsafe { read_stream(name, ndims, lo, hi, "tf_stream_new_spread") }?;
        let dim = usize::try_from(dim).map_err(|_| {
            Error::Misuse(format!(
                "tf_stream_new_spread: stream {name} spread along dimension {dim}"
            ))
        })?;
        let id = graph.spread_stream(&name, &lo, &hi, dim)?;
        c_int::try_from(id.index())
            .map_err(|_| Error::Misuse(format!("too many streams (at most {})", c_int::MAX)))
    })
}

/// Starts describing a task that runs `fn(env, key)` and then produces `(out_stream, key)`.
///
/// # Safety
/// `g` comes from `tf_graph_begin`; `key` points to the out stream's `ndims` values; `fn` may be
/// called with `env` from any thread, concurrently with the other tasks, until `tf_graph_end`
/// returns.
#[no_mangle]
pub unsafe extern "C" fn tf_task_begin(
    g: *mut TfGraph,
    out_stream: c_int,
    key: *const c_long,
    f: Option<CTaskFn>,
    env: *const c_void,
) {
    guard("tf_task_begin", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_task_begin") }?;
        let out = i64::from(out_stream);
        let n = graph.stream_ndims(out, &|| "the output of a task (tf_task_begin)".to_string())?;
        let mut buf = [0; MAX_DIMS];
        // SAFETY: per this function's contract, `n` values.
        let key = unsafe { read_key(key, n, &mut buf, "tf_task_begin") }?;
        let f = f.ok_or_else(|| Error::Misuse("tf_task_begin: NULL task function".to_string()))?;
        // SAFETY: the caller promises `f(env, coords)` may run on any thread until the graph ends.
        let body = unsafe { Body::c(f, env) };
        graph.begin_task(out, key, body)
    });
}

/// Adds the input `(stream, key)` to the task being described.
///
/// # Safety
/// `g` comes from `tf_graph_begin`; `key` points to the stream's `ndims` values.
#[no_mangle]
pub unsafe extern "C" fn tf_task_input(g: *mut TfGraph, stream: c_int, key: *const c_long) {
    guard("tf_task_input", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_task_input") }?;
        let id = i64::from(stream);
        let n = graph.stream_ndims(id, &|| "an input of a task (tf_task_input)".to_string())?;
        let mut buf = [0; MAX_DIMS];
        // SAFETY: per this function's contract, `n` values.
        let key = unsafe { read_key(key, n, &mut buf, "tf_task_input") }?;
        graph.add_input(id, key)
    });
}

/// Finishes the description; the task may start at once.
///
/// # Safety
/// `g` comes from `tf_graph_begin`.
#[no_mangle]
pub unsafe extern "C" fn tf_task_end(g: *mut TfGraph) {
    guard("tf_task_end", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_task_end") }?;
        graph.end_task()
    });
}

/// Starts describing a soft barrier: a bodiless task producing `(out_stream, key)` once all
/// its inputs (`tf_task_input`) are produced; ended by `tf_task_end`.
///
/// # Safety
/// `g` comes from `tf_graph_begin`; `key` points to the out stream's `ndims` values.
#[no_mangle]
pub unsafe extern "C" fn tf_barrier_begin(g: *mut TfGraph, out_stream: c_int, key: *const c_long) {
    guard("tf_barrier_begin", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_barrier_begin") }?;
        let out = i64::from(out_stream);
        let n = graph.stream_ndims(out, &|| {
            "the output of a barrier (tf_barrier_begin)".to_string()
        })?;
        let mut buf = [0; MAX_DIMS];
        // SAFETY: per this function's contract, `n` values.
        let key = unsafe { read_key(key, n, &mut buf, "tf_barrier_begin") }?;
        graph.begin_task(out, key, Body::empty())
    });
}

/// Declares a counted soft barrier: `(out_stream, key)` is produced once `count` tasks
/// spawned after it arrive at it (`tf_task_arrive`).
///
/// # Safety
/// `g` comes from `tf_graph_begin`; `key` points to the out stream's `ndims` values.
#[no_mangle]
pub unsafe extern "C" fn tf_barrier_counted(
    g: *mut TfGraph,
    out_stream: c_int,
    key: *const c_long,
    count: c_long,
) {
    guard("tf_barrier_counted", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_barrier_counted") }?;
        let out = i64::from(out_stream);
        let n = graph.stream_ndims(out, &|| {
            "a counted barrier (tf_barrier_counted)".to_string()
        })?;
        let mut buf = [0; MAX_DIMS];
        // SAFETY: per this function's contract, `n` values.
        let key = unsafe { read_key(key, n, &mut buf, "tf_barrier_counted") }?;
        let count = u64::try_from(count)
            .map_err(|_| Error::Misuse(format!("tf_barrier_counted: negative count {count}")))?;
        graph.counted_barrier_at(out, key, count)
    });
}

/// Adds to the task being described an arrival at the counted barrier `(stream, key)`.
///
/// # Safety
/// `g` comes from `tf_graph_begin`; `key` points to the stream's `ndims` values.
#[no_mangle]
pub unsafe extern "C" fn tf_task_arrive(g: *mut TfGraph, stream: c_int, key: *const c_long) {
    guard("tf_task_arrive", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_task_arrive") }?;
        let id = i64::from(stream);
        let n = graph.stream_ndims(id, &|| "an arrival of a task (tf_task_arrive)".to_string())?;
        let mut buf = [0; MAX_DIMS];
        // SAFETY: per this function's contract, `n` values.
        let key = unsafe { read_key(key, n, &mut buf, "tf_task_arrive") }?;
        graph.add_arrival(id, key)
    });
}

/// Runs tasks until all have finished, then frees the graph.
///
/// # Safety
/// `g` comes from `tf_graph_begin` and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn tf_graph_end(g: *mut TfGraph) {
    guard("tf_graph_end", || {
        // SAFETY: per this function's contract (checks null and thread before we take it).
        unsafe { graph(g, "tf_graph_end") }?;
        // SAFETY: `g` is a live graph from `tf_graph_begin`, owned by this thread; the caller
        // gives it up.
        let g = unsafe { Box::from_raw(g) };
        g.graph.wait()
    });
}

/// A C `long` as `i64` (the same type on LP64, wider where `long` has 32 bits).
#[allow(clippy::useless_conversion)]
fn long(v: c_long) -> i64 {
    i64::from(v)
}

/// The opaque `tf_blocks` of the C ABI: scratch blocks lent by tile row ([`crate::Blocks`]).
pub struct TfBlocks {
    blocks: Blocks,
}

/// The blocks behind `b`, checked for null.
///
/// # Safety
/// `b` is null or a pointer returned by `tf_blocks_new` and not yet passed to `tf_blocks_free`.
unsafe fn blocks<'a>(b: *const TfBlocks, function: &str) -> Result<&'a Blocks, Error> {
    // SAFETY: per this function's contract, a non-null `b` is live; its state is atomics and a
    // lock, shared by reference among threads.
    let b = unsafe { b.as_ref() }
        .ok_or_else(|| Error::Misuse(format!("{function} called with NULL blocks")))?;
    Ok(&b.blocks)
}

/// `count` blocks of `bytes` bytes each, block `b` with `users[b]` users (see `streamrt.h`).
///
/// # Safety
/// `users` points to `count` values.
#[no_mangle]
pub unsafe extern "C" fn tf_blocks_new(
    count: c_long,
    bytes: usize,
    users: *const c_long,
) -> *mut TfBlocks {
    guard("tf_blocks_new", || {
        let count = usize::try_from(count)
            .map_err(|_| Error::Misuse(format!("tf_blocks_new: {count} blocks")))?;
        if users.is_null() && count > 0 {
            return Err(Error::Misuse("tf_blocks_new called with NULL users".into()));
        }
        let users: Vec<i64> = (0..count)
            // SAFETY: per this function's contract, `count` values.
            .map(|b| long(unsafe { *users.add(b) }))
            .collect();
        let blocks = Blocks::new(&users, bytes)?;
        Ok(Box::into_raw(Box::new(TfBlocks { blocks })))
    })
}

/// The memory of `block`, lent to it by its first caller.
///
/// # Safety
/// `b` comes from `tf_blocks_new` and is not freed.
#[no_mangle]
pub unsafe extern "C" fn tf_blocks_at(b: *const TfBlocks, block: c_long) -> *mut c_void {
    guard("tf_blocks_at", || {
        // SAFETY: per this function's contract.
        let address = unsafe { blocks(b, "tf_blocks_at") }?.at(long(block))?;
        Ok(address as *mut c_void)
    })
}

/// One user of `block` less; the last gives its memory back.
///
/// # Safety
/// `b` comes from `tf_blocks_new` and is not freed.
#[no_mangle]
pub unsafe extern "C" fn tf_blocks_leave(b: *const TfBlocks, block: c_long) {
    guard("tf_blocks_leave", || {
        // SAFETY: per this function's contract.
        unsafe { blocks(b, "tf_blocks_leave") }?.leave(long(block))
    })
}

/// Frees the blocks and their memory.
///
/// # Safety
/// `b` comes from `tf_blocks_new`, no task uses it any more, and it is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn tf_blocks_free(b: *mut TfBlocks) {
    guard("tf_blocks_free", || {
        // SAFETY: per this function's contract (checks null before we take it).
        unsafe { blocks(b, "tf_blocks_free") }?;
        // SAFETY: `b` is live, from `Box::into_raw` in `tf_blocks_new`; the caller gives it up.
        drop(unsafe { Box::from_raw(b) });
        Ok(())
    })
}

/// Crash reports: a task body of a C program that crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
/// SIGABRT) makes the process print `streamrt: error: task NAME(KEY) crashed: SIGNAL` before it
/// dies of that signal (exit status non-zero, core dump as usual).
///
/// Installed once, by the first `tf_graph_begin`, for each of those signals whose action is the
/// default (a program's own handlers are left alone). The handler only reads the thread's
/// running task (a thread-local) and formats into a stack buffer (async-signal-safe), then puts
/// the previous action back and lets the signal take its course: a fault happens again when
/// the handler returns; a signal sent by `kill`/`raise`/`abort` is raised again. A stack overflow
/// in a task dies of SIGSEGV without the report (there is no alternate signal stack).
#[cfg(unix)]
mod crash {
    use std::ffi::c_int;
    use std::sync::{Once, OnceLock};

    use crate::MAX_DIMS;

    const SIGNALS: [(c_int, &str); 5] = [
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGABRT, "SIGABRT"),
    ];

    /// The actions replaced, by position in `SIGNALS` (`None`: not replaced).
    struct Previous([Option<libc::sigaction>; SIGNALS.len()]);

    // SAFETY: plain data, written once before any handler can read it.
    unsafe impl Sync for Previous {}
    // SAFETY: as above.
    unsafe impl Send for Previous {}

    static PREVIOUS: OnceLock<Previous> = OnceLock::new();

    pub(super) fn install() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            let mut previous = Previous([None; SIGNALS.len()]);
            // Record first, install after: the handler must find the previous actions.
            for (slot, &(sig, _)) in previous.0.iter_mut().zip(&SIGNALS) {
                // SAFETY: a zeroed sigaction is a valid out-parameter; a null new action only
                // queries.
                let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
                // SAFETY: as above.
                let queried = unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } == 0;
                if queried && old.sa_sigaction == libc::SIG_DFL {
                    *slot = Some(old);
                }
            }
            let previous = PREVIOUS.get_or_init(|| previous);
            for (old, &(sig, _)) in previous.0.iter().zip(&SIGNALS) {
                if old.is_none() {
                    continue;
                }
                // SAFETY: a zeroed sigaction with a valid handler and an empty mask.
                unsafe {
                    let mut action: libc::sigaction = std::mem::zeroed();
                    let handler: Handler = on_crash;
                    action.sa_sigaction = handler as usize;
                    action.sa_flags = libc::SA_SIGINFO;
                    libc::sigemptyset(&mut action.sa_mask);
                    libc::sigaction(sig, &action, std::ptr::null_mut());
                }
            }
        });
    }

    /// A fixed buffer written without allocating.
    struct Buf {
        bytes: [u8; 512],
        len: usize,
    }

    impl Buf {
        fn push(&mut self, s: &[u8]) {
            let n = s.len().min(self.bytes.len() - self.len);
            self.bytes[self.len..self.len + n].copy_from_slice(&s[..n]);
            self.len += n;
        }

        fn push_int(&mut self, v: i64) {
            let mut digits = [0u8; 20];
            let mut n = 0;
            let mut u = v.unsigned_abs();
            loop {
                digits[n] = b'0' + (u % 10) as u8;
                n += 1;
                u /= 10;
                if u == 0 {
                    break;
                }
            }
            if v < 0 {
                self.push(b"-");
            }
            digits[..n].reverse();
            self.push(&digits[..n]);
        }
    }

    type Handler = extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void);

    extern "C" fn on_crash(sig: c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
        let Some(index) = SIGNALS.iter().position(|&(s, _)| s == sig) else {
            return;
        };
        // SAFETY: we interrupt this thread, so a running task's body is still running.
        if let Some((name, key, ndims)) = unsafe { crate::task::running_task() } {
            let mut buf = Buf {
                bytes: [0; 512],
                len: 0,
            };
            buf.push(b"streamrt: error: task ");
            buf.push(name.as_bytes());
            buf.push(b"(");
            for (d, &k) in key[..ndims.min(MAX_DIMS)].iter().enumerate() {
                if d > 0 {
                    buf.push(b", ");
                }
                buf.push_int(k);
            }
            buf.push(b") crashed: ");
            buf.push(SIGNALS[index].1.as_bytes());
            buf.push(b"\n");
            // SAFETY: writing our buffer to stderr (async-signal-safe).
            unsafe { libc::write(2, buf.bytes.as_ptr().cast(), buf.len) };
        }
        // Put the previous action back and let the signal take its course.
        if let Some(Some(old)) = PREVIOUS.get().map(|p| &p.0[index]) {
            // SAFETY: restoring an action read from the system.
            unsafe { libc::sigaction(sig, old, std::ptr::null_mut()) };
        }
        // SAFETY: `info` is the kernel's siginfo for this signal.
        let code = unsafe { info.as_ref() }.map_or(0, |i| i.si_code);
        if code <= 0 {
            // Sent by kill, raise or abort (SI_USER, SI_TKILL): returning would not repeat it.
            // SAFETY: raising a signal whose action was just restored.
            unsafe { libc::raise(sig) };
        }
    }
}

#[cfg(not(unix))]
mod crash {
    /// No crash reports on this platform.
    pub(super) fn install() {}
}
