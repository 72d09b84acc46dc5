//! The GPU path of the C ABI (`tf_gpu_*` in `include/streamrt.h`): a device with the kernels of
//! one generated file, device memory, and launch graphs that order kernel launches by the same
//! (stream, key) tokens as the CPU task graphs, with CUDA streams and events instead of threads.
//!
//! Owns: choosing the device (`TILEDFLOW_GPU`), the one-line fallback notice, the bookkeeping of a
//! launch graph (keys, events, which CUDA stream a task goes on) and its error messages. The
//! devices themselves are in `emulate` (host threads, for tests) and `cuda` (the driver through
//! cudarc). Must not: know anything of the compiler or of kernels' contents; synchronize the
//! whole device before `tf_gpu_graph_end` (copies out excepted, which wait for all work).
//!
//! Placement rule: the device has a pool of [`POOL`] CUDA streams. A task goes on the CUDA stream
//! of one of its inputs when that input's task is still the last one placed on it (it would run
//! right after it anyway: no wait for that input, and no unrelated work queued in between; of
//! several such inputs, the one placed last); otherwise on the next stream round-robin. It then
//! waits (cuStreamWaitEvent) for each input whose task ended on another stream. A task's
//! launches all go on its stream, in order; its event is recorded there at `tf_gpu_task_end`. So
//! a chain of tiles stays on one stream, and independent tiles (the rows of a wavefront, the
//! branches of a diamond) spread over the pool. (The simpler rule "inputs all on one stream:
//! that stream" would put a whole wavefront, whose tiles all descend from the first, on one.)
//!
//! Unsafe code: the C ABI (`abi`), the emulated kernels' calls and the driver calls are FFI, like
//! `streamrt::ffi`; the bookkeeping here is safe Rust.

pub mod abi;
mod cuda;
mod emulate;

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

/// How many CUDA streams a device uses (emulated: how many host threads run launches).
pub const POOL: usize = 4;

/// The environment variable choosing the device: unset (or `cuda`) tries the real device, `off`
/// uses none, `emulate` the emulated one.
pub const GPU_ENV: &str = "TILEDFLOW_GPU";

/// The host version of a kernel (generated under `TF_CUDA_EMULATE`): runs every block and
/// thread of one launch in turn.
pub type EmuFn = unsafe extern "C" fn(grid: *const u32, block: *const u32, args: *mut *mut c_void);

/// Prints the fallback notice, once per process.
pub(crate) fn notice(reason: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("tiledflow: {reason}; running the CPU task version");
    }
}

/// An event: a task's completion.
enum Event {
    Emulated(std::sync::Arc<emulate::Flag>),
    Cuda(cuda::Event),
}

/// A device with its loaded kernels.
enum Device {
    Emulated(emulate::Emulated),
    Cuda(cuda::Cuda),
}

/// One launch, as the device receives it.
struct Launch<'a> {
    kernel: usize,
    grid: [u32; 3],
    block: [u32; 3],
    /// Pointers to the arguments' bytes (the caller's; copied by the device at the call).
    args: &'a [*mut c_void],
    sizes: &'a [usize],
}

impl Device {
    fn record(&self, stream: usize) -> Result<Event, String> {
        match self {
            Device::Emulated(d) => Ok(Event::Emulated(d.record(stream))),
            Device::Cuda(d) => d.record(stream).map(Event::Cuda),
        }
    }

    fn wait(&self, stream: usize, event: &Event) -> Result<(), String> {
        match (self, event) {
            (Device::Emulated(d), Event::Emulated(flag)) => {
                d.wait(stream, flag.clone());
                Ok(())
            }
            (Device::Cuda(d), Event::Cuda(e)) => d.wait(stream, e),
            _ => Err("an event of another device".to_string()),
        }
    }

    fn launch(&self, stream: usize, launch: &Launch) -> Result<(), String> {
        match self {
            Device::Emulated(d) => {
                d.launch(stream, launch);
                Ok(())
            }
            Device::Cuda(d) => d.launch(stream, launch),
        }
    }

    /// Waits for all work queued on the device.
    fn synchronize(&self) -> Result<(), String> {
        match self {
            Device::Emulated(d) => {
                d.synchronize();
                Ok(())
            }
            Device::Cuda(d) => d.synchronize(),
        }
    }
}

/// The opaque `tf_gpu` of the C ABI: a device and its kernels' names. Created by `tf_gpu_load`
/// and kept for the whole process.
pub struct TfGpu {
    device: Device,
    names: Vec<String>,
}

/// Where a finished task's event is.
#[derive(Clone, Copy)]
struct Done {
    /// The pool stream its launches and event went on.
    stream: usize,
    /// Its index in the graph's events.
    event: usize,
    /// Its serial number in the graph (0, 1, 2, ... in `tf_gpu_task_begin` order).
    task: usize,
}

/// A key space (a task class), as declared by `tf_gpu_stream_new`.
struct KeySpace {
    name: String,
    lo: Vec<i64>,
    hi: Vec<i64>,
    /// The tasks that ended, by key.
    done: HashMap<Vec<i64>, Done>,
}

/// The task being described.
struct Current {
    out: usize,
    key: Vec<i64>,
    inputs: Vec<Done>,
    /// The pool stream it went on: chosen at its first launch or at its end.
    stream: Option<usize>,
}

/// The opaque `tf_gpu_graph` of the C ABI: the launches of one SCoP execution.
pub struct GpuGraph {
    gpu: &'static TfGpu,
    spaces: Vec<KeySpace>,
    current: Option<Current>,
    events: Vec<Event>,
    /// Per pool stream, the serial number of the last task placed on it.
    tails: [Option<usize>; POOL],
    next_stream: usize,
    tasks: usize,
}

/// Formats `NAME(k0, k1, ...)`.
fn task_name(space: &str, key: &[i64]) -> String {
    let key: Vec<String> = key.iter().map(i64::to_string).collect();
    format!("{space}({})", key.join(", "))
}

impl GpuGraph {
    pub(crate) fn new(gpu: &'static TfGpu) -> Self {
        GpuGraph {
            gpu,
            spaces: Vec::new(),
            current: None,
            events: Vec::new(),
            tails: [None; POOL],
            next_stream: 0,
            tasks: 0,
        }
    }

    /// The number of key dimensions of stream `id`, or an error naming `what` uses it.
    pub(crate) fn ndims(&self, id: i64, what: &str) -> Result<usize, String> {
        usize::try_from(id)
            .ok()
            .and_then(|i| self.spaces.get(i))
            .map(|s| s.lo.len())
            .ok_or_else(|| {
                format!(
                    "{what}: unknown stream {id} (the graph has {} stream(s))",
                    self.spaces.len()
                )
            })
    }

    pub(crate) fn stream_new(&mut self, name: String, lo: &[i64], hi: &[i64]) -> usize {
        self.spaces.push(KeySpace {
            name,
            lo: lo.to_vec(),
            hi: hi.to_vec(),
            done: HashMap::new(),
        });
        self.spaces.len() - 1
    }

    /// Checks that `key` lies in stream `id`'s box.
    fn check_key(&self, id: usize, key: &[i64], what: &str) -> Result<(), String> {
        let s = &self.spaces[id];
        if key
            .iter()
            .zip(&s.lo)
            .zip(&s.hi)
            .any(|((k, lo), hi)| k < lo || k > hi)
        {
            let lo: Vec<String> = s.lo.iter().map(i64::to_string).collect();
            let hi: Vec<String> = s.hi.iter().map(i64::to_string).collect();
            return Err(format!(
                "{what}: key {} outside the box [{}] .. [{}] of its stream",
                task_name(&s.name, key),
                lo.join(", "),
                hi.join(", ")
            ));
        }
        Ok(())
    }

    /// The name of the task being described, for messages.
    fn current_name(&self) -> String {
        self.current
            .as_ref()
            .map_or_else(String::new, |c| task_name(&self.spaces[c.out].name, &c.key))
    }

    pub(crate) fn task_begin(&mut self, out: usize, key: &[i64]) -> Result<(), String> {
        if self.current.is_some() {
            return Err(format!(
                "tf_gpu_task_begin: task {} was not ended (tf_gpu_task_end)",
                self.current_name()
            ));
        }
        self.check_key(out, key, "tf_gpu_task_begin")?;
        let space = &self.spaces[out];
        if space.done.contains_key(key) {
            return Err(format!(
                "tf_gpu_task_begin: task {} begun twice",
                task_name(&space.name, key)
            ));
        }
        self.current = Some(Current {
            out,
            key: key.to_vec(),
            inputs: Vec::new(),
            stream: None,
        });
        Ok(())
    }

    pub(crate) fn task_input(&mut self, id: usize, key: &[i64]) -> Result<(), String> {
        if self.current.is_none() {
            return Err("tf_gpu_task_input called outside a task (tf_gpu_task_begin)".into());
        }
        self.check_key(id, key, "tf_gpu_task_input")?;
        let space = &self.spaces[id];
        let Some(&done) = space.done.get(key) else {
            return Err(format!(
                "tf_gpu_task_input: task {} waits for {}, which no task has produced before it \
                 (an input's task must be begun and ended first)",
                self.current_name(),
                task_name(&space.name, key)
            ));
        };
        let current = self.current.as_mut().expect("checked above");
        if current.stream.is_some() {
            return Err(format!(
                "tf_gpu_task_input: task {} already launched a kernel; inputs come first",
                self.current_name()
            ));
        }
        current.inputs.push(done);
        Ok(())
    }

    /// Chooses the current task's stream (see the module doc) and queues its waits.
    fn place(&mut self) -> Result<usize, String> {
        let current = self.current.as_mut().expect("a task is being described");
        if let Some(stream) = current.stream {
            return Ok(stream);
        }
        let stream = match current
            .inputs
            .iter()
            .filter(|d| self.tails[d.stream] == Some(d.task))
            .max_by_key(|d| d.task)
        {
            Some(d) => d.stream,
            None => {
                let s = self.next_stream;
                self.next_stream = (s + 1) % POOL;
                s
            }
        };
        current.stream = Some(stream);
        let task = self.tasks;
        self.tasks += 1;
        self.tails[stream] = Some(task);
        let mut waited = Vec::new();
        for d in &current.inputs {
            if d.stream != stream && !waited.contains(&d.event) {
                waited.push(d.event);
                self.gpu.device.wait(stream, &self.events[d.event])?;
            }
        }
        Ok(stream)
    }

    pub(crate) fn launch(
        &mut self,
        kernel: i64,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[*mut c_void],
        sizes: &[usize],
    ) -> Result<(), String> {
        if self.current.is_none() {
            return Err("tf_gpu_launch called outside a task (tf_gpu_task_begin)".into());
        }
        let names = &self.gpu.names;
        let k = usize::try_from(kernel)
            .ok()
            .filter(|&k| k < names.len())
            .ok_or_else(|| {
                format!(
                    "tf_gpu_launch: kernel index {kernel} out of range (the module has {} \
                     kernel(s)), in task {}",
                    names.len(),
                    self.current_name()
                )
            })?;
        let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
        if grid.contains(&0) || block.contains(&0) || threads > 1024 || block[2] > 64 {
            return Err(format!(
                "tf_gpu_launch: kernel {} in task {}: invalid grid {grid:?} / block {block:?} \
                 (no dimension 0, at most 1024 threads and 64 in z per block)",
                names[k],
                self.current_name()
            ));
        }
        let stream = self.place()?;
        let launch = Launch {
            kernel: k,
            grid,
            block,
            args,
            sizes,
        };
        self.gpu.device.launch(stream, &launch).map_err(|e| {
            format!(
                "kernel {} in task {} failed to launch: {e}",
                names[k],
                self.current_name()
            )
        })
    }

    pub(crate) fn task_end(&mut self) -> Result<(), String> {
        if self.current.is_none() {
            return Err("tf_gpu_task_end called outside a task (tf_gpu_task_begin)".into());
        }
        let stream = self.place()?;
        let current = self.current.take().expect("checked above");
        let event = self.gpu.device.record(stream)?;
        self.events.push(event);
        let done = Done {
            stream,
            event: self.events.len() - 1,
            task: self.tails[stream].expect("placed above"),
        };
        self.spaces[current.out].done.insert(current.key, done);
        Ok(())
    }

    /// Waits for every launch of the graph; the graph's events are released when it drops.
    pub(crate) fn end(&mut self) -> Result<(), String> {
        if self.current.is_some() {
            return Err(format!(
                "tf_gpu_graph_end: task {} was not ended (tf_gpu_task_end)",
                self.current_name()
            ));
        }
        self.gpu.device.synchronize().map_err(|e| {
            format!(
                "a kernel of this graph failed: {e} (kernels: {})",
                self.gpu.names.join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn nop(_grid: *const u32, _block: *const u32, _args: *mut *mut c_void) {}

    fn graph() -> GpuGraph {
        let device = Device::Emulated(emulate::Emulated::new(vec![nop]).unwrap());
        let gpu = Box::leak(Box::new(TfGpu {
            device,
            names: vec!["k".into()],
        }));
        GpuGraph::new(gpu)
    }

    /// Describes a task with `inputs` and one launch; returns the stream it went on.
    fn task(g: &mut GpuGraph, space: usize, key: &[i64], inputs: &[&[i64]]) -> usize {
        g.task_begin(space, key).unwrap();
        for input in inputs {
            g.task_input(space, input).unwrap();
        }
        g.launch(0, [1, 1, 1], [1, 1, 1], &[], &[]).unwrap();
        let stream = g.current.as_ref().unwrap().stream.unwrap();
        g.task_end().unwrap();
        stream
    }

    #[test]
    fn a_diamond_keeps_one_branch_on_its_producers_stream() {
        let mut g = graph();
        let s = g.stream_new("Node".into(), &[0], &[3]);
        let a = task(&mut g, s, &[0], &[]);
        let b = task(&mut g, s, &[1], &[&[0]]);
        let c = task(&mut g, s, &[2], &[&[0]]);
        let d = task(&mut g, s, &[3], &[&[1], &[2]]);
        // B follows A on its stream; A is no longer last there, so C goes on the next stream
        // (and waits for A); B and C are both last on theirs: D follows C, placed last, and
        // waits for B.
        assert_eq!((a, b, c, d), (0, 0, 1, 1));
        g.end().unwrap();
    }

    #[test]
    fn a_wavefront_spawned_row_by_row_puts_each_row_on_a_stream() {
        let mut g = graph();
        let s = g.stream_new("Tile".into(), &[0, 0], &[5, 5]);
        for i in 0..6i64 {
            for j in 0..6i64 {
                let (up, left) = ([i - 1, j], [i, j - 1]);
                let mut inputs: Vec<&[i64]> = Vec::new();
                if i > 0 {
                    inputs.push(&up);
                }
                if j > 0 {
                    inputs.push(&left);
                }
                let stream = task(&mut g, s, &[i, j], &inputs);
                assert_eq!(stream, i as usize % POOL, "tile ({i}, {j})");
            }
        }
        g.end().unwrap();
    }
}
