//! The emulated device (`TILEDFLOW_GPU=emulate`): runs the host versions of the kernels
//! (`tf_emu_<kernel>`, generated under `TF_CUDA_EMULATE`) with the ordering of a real device,
//! so that tests without a GPU see what a missing dependence would do on one.
//!
//! Faithful, not sequential: each of the [`POOL`](super::POOL) CUDA streams is a FIFO of
//! operations run by its own host thread; an event is a completion flag that a stream sets when
//! it reaches the event's record and that another stream's wait blocks on; a launch copies its
//! argument bytes at the call (like cuLaunchKernel), so the caller may reuse its argument
//! variables at once. Device memory is host memory (malloc/memcpy). The stream threads live as
//! long as the process (a `tf_gpu` is never unloaded).

use std::ffi::c_void;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};

use super::{EmuFn, Launch, POOL};

/// An event: set once, waited for by any number of threads.
#[derive(Default)]
pub(crate) struct Flag {
    done: Mutex<bool>,
    wake: Condvar,
}

impl Flag {
    fn set(&self) {
        *self.done.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.notify_all();
    }

    fn wait(&self) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            done = self.wake.wait(done).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// 16-byte aligned storage for argument bytes (any C argument type is at most that aligned).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Chunk([u8; 16]);

/// A launch with its own copy of the arguments.
struct QueuedLaunch {
    kernel: EmuFn,
    grid: [u32; 3],
    block: [u32; 3],
    /// Argument `i` starts at chunk `offsets[i]`.
    bytes: Vec<Chunk>,
    offsets: Vec<usize>,
}

// SAFETY: the queued launch owns its argument bytes; the pointers they may contain (device
// pointers, i.e. host memory here) are the program's, used by its kernel as on a real device.
unsafe impl Send for QueuedLaunch {}

enum Op {
    Launch(QueuedLaunch),
    Record(Arc<Flag>),
    Wait(Arc<Flag>),
}

/// The emulated device: the kernels' host versions and the streams' queues.
pub(crate) struct Emulated {
    kernels: Vec<EmuFn>,
    streams: Vec<Mutex<Sender<Op>>>,
}

impl Emulated {
    /// Starts the stream threads.
    pub(crate) fn new(kernels: Vec<EmuFn>) -> Result<Self, String> {
        let mut streams = Vec::with_capacity(POOL);
        for s in 0..POOL {
            let (tx, rx) = channel::<Op>();
            std::thread::Builder::new()
                .name(format!("tf-gpu-emu-{s}"))
                .spawn(move || {
                    for op in rx {
                        match op {
                            Op::Launch(l) => run(l),
                            Op::Record(flag) => flag.set(),
                            Op::Wait(flag) => flag.wait(),
                        }
                    }
                })
                .map_err(|e| format!("cannot start an emulated stream's thread: {e}"))?;
            streams.push(Mutex::new(tx));
        }
        Ok(Emulated { kernels, streams })
    }

    fn send(&self, stream: usize, op: Op) {
        let tx = self.streams[stream]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // The receiving thread never exits while the process runs.
        tx.send(op).expect("an emulated stream's thread is gone");
    }

    pub(crate) fn record(&self, stream: usize) -> Arc<Flag> {
        let flag = Arc::new(Flag::default());
        self.send(stream, Op::Record(flag.clone()));
        flag
    }

    pub(crate) fn wait(&self, stream: usize, flag: Arc<Flag>) {
        self.send(stream, Op::Wait(flag));
    }

    /// Queues a launch, copying its arguments' bytes now.
    pub(crate) fn launch(&self, stream: usize, launch: &Launch) {
        let mut bytes = Vec::new();
        let mut offsets = Vec::with_capacity(launch.args.len());
        for (&arg, &size) in launch.args.iter().zip(launch.sizes) {
            offsets.push(bytes.len());
            let start = bytes.len();
            bytes.resize(start + size.div_ceil(16).max(1), Chunk([0; 16]));
            if size == 0 {
                continue; // its pointer may be null
            }
            // SAFETY: the caller gives `size` readable bytes at `arg` (tf_gpu_launch's
            // contract); the destination has at least `size` bytes from chunk `start`.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    arg.cast::<u8>(),
                    bytes[start..].as_mut_ptr().cast::<u8>(),
                    size,
                )
            };
        }
        let queued = QueuedLaunch {
            kernel: self.kernels[launch.kernel],
            grid: launch.grid,
            block: launch.block,
            bytes,
            offsets,
        };
        self.send(stream, Op::Launch(queued));
    }

    /// Waits until every stream has run everything queued so far.
    pub(crate) fn synchronize(&self) {
        let flags: Vec<Arc<Flag>> = (0..POOL).map(|s| self.record(s)).collect();
        for flag in flags {
            flag.wait();
        }
    }
}

/// Runs one launch on the calling stream thread.
fn run(mut launch: QueuedLaunch) {
    let base = launch.bytes.as_mut_ptr();
    let mut args: Vec<*mut c_void> = launch
        .offsets
        .iter()
        // SAFETY: each offset is inside `bytes` (set by `Emulated::launch`).
        .map(|&o| unsafe { base.add(o) }.cast::<c_void>())
        .collect();
    // SAFETY: the kernel's host version reads its arguments from `args` (copies of what the
    // program passed to tf_gpu_launch) and runs the launch's blocks and threads.
    unsafe {
        (launch.kernel)(
            launch.grid.as_ptr(),
            launch.block.as_ptr(),
            args.as_mut_ptr(),
        )
    };
}

/// Device memory: a host copy of `bytes` bytes (at least one, so the pointer is valid and
/// distinct for 0 bytes).
pub(crate) fn copy_in(host: *const c_void, bytes: usize) -> Result<*mut c_void, String> {
    // SAFETY: malloc of a non-zero size.
    let dev = unsafe { libc::malloc(bytes.max(1)) };
    if dev.is_null() {
        return Err(format!("tf_gpu_copy_in: out of memory ({bytes} bytes)"));
    }
    if bytes > 0 {
        // SAFETY: `host` has `bytes` readable bytes (tf_gpu_copy_in's contract), `dev` as many.
        unsafe { std::ptr::copy_nonoverlapping(host.cast::<u8>(), dev.cast::<u8>(), bytes) };
    }
    Ok(dev)
}

/// Copies `bytes` bytes of device memory back to the host (after the caller synchronized).
pub(crate) fn copy_out(host: *mut c_void, dev: *const c_void, bytes: usize) {
    if bytes > 0 {
        // SAFETY: both have `bytes` bytes (tf_gpu_copy_out's contract); the device is idle.
        unsafe { std::ptr::copy_nonoverlapping(dev.cast::<u8>(), host.cast::<u8>(), bytes) };
    }
}

/// Releases device memory from [`copy_in`].
pub(crate) fn free(dev: *mut c_void) {
    // SAFETY: `dev` came from `copy_in`'s malloc (tf_gpu_free's contract).
    unsafe { libc::free(dev) };
}
