//! The `tf_gpu_*` functions of `include/streamrt.h`: argument checks and the choice of device,
//! over [`GpuGraph`](super::GpuGraph) and the devices.
//!
//! As in [`streamrt::ffi`], every function catches panics, and misuse or a device failure prints
//! `streamrt: error: ...` (naming the task's stream and key, and the kernel) and exits with
//! status 70. A `tf_gpu` lives for the whole process; a `tf_gpu_graph` from
//! `tf_gpu_graph_begin` is freed by `tf_gpu_graph_end` and used by the thread that began it.

use std::ffi::{c_char, c_int, c_long, c_uint, c_void, CStr};
use std::panic::catch_unwind;
use std::thread::ThreadId;

use super::{cuda, emulate, notice, Device, EmuFn, GpuGraph, TfGpu, GPU_ENV};
use streamrt::ffi::{current_thread, guard, read_key, read_stream};
use streamrt::Error;

/// The opaque `tf_gpu_graph` of the C ABI: a launch graph and the thread that controls it.
pub struct TfGpuGraph {
    graph: GpuGraph,
    owner: ThreadId,
}

fn gpu_err(message: String) -> Error {
    Error::Gpu(message)
}

/// The device behind `m`.
///
/// # Safety
/// `m` is null or a pointer returned by `tf_gpu_load`.
unsafe fn device<'a>(m: *const TfGpu, function: &str) -> Result<&'a TfGpu, Error> {
    // SAFETY: per this function's contract; a `tf_gpu` is never freed.
    unsafe { m.as_ref() }.ok_or_else(|| gpu_err(format!("{function} called with a NULL tf_gpu")))
}

/// The graph behind `g`, checked for null and for the calling thread.
///
/// # Safety
/// `g` is null or a pointer from `tf_gpu_graph_begin` not yet passed to `tf_gpu_graph_end`.
unsafe fn graph<'a>(g: *mut TfGpuGraph, function: &str) -> Result<&'a mut GpuGraph, Error> {
    // SAFETY: per this function's contract; only its control thread (checked) uses it.
    let g = unsafe { g.as_mut() }
        .ok_or_else(|| gpu_err(format!("{function} called with a NULL tf_gpu_graph")))?;
    if g.owner != current_thread() {
        return Err(gpu_err(format!(
            "{function} called from a thread other than the one that called tf_gpu_graph_begin"
        )));
    }
    Ok(&mut g.graph)
}

/// Reads the `ndims` values of a key of stream `stream` of `graph`.
///
/// # Safety
/// `key` is null or points to the stream's `ndims` values.
unsafe fn key_of(
    graph: &GpuGraph,
    stream: c_int,
    key: *const c_long,
    function: &str,
) -> Result<(usize, Vec<i64>), Error> {
    let n = graph.ndims(i64::from(stream), function).map_err(gpu_err)?;
    let mut buf = [0; streamrt::MAX_DIMS];
    // SAFETY: per this function's contract.
    let key = unsafe { read_key(key, n, &mut buf, function) }?;
    Ok((stream as usize, key.to_vec()))
}

/// Reads three `unsigned` values.
///
/// # Safety
/// `p` is null or points to three values.
unsafe fn dim3(p: *const c_uint, what: &str) -> Result<[u32; 3], Error> {
    if p.is_null() {
        return Err(gpu_err(format!("tf_gpu_launch: NULL {what}")));
    }
    // SAFETY: per this function's contract.
    let v = unsafe { std::slice::from_raw_parts(p, 3) };
    Ok([v[0], v[1], v[2]])
}

/// Chooses and opens the device (see `include/streamrt.h`); `Err` is the notice's reason.
///
/// # Safety
/// `emu` is null or has `names.len()` entries.
unsafe fn open(
    source: &str,
    names: &[String],
    emu: *const Option<EmuFn>,
) -> Result<Device, String> {
    let choice = std::env::var(GPU_ENV).unwrap_or_default();
    match choice.as_str() {
        "off" => Err(format!("GPU disabled by {GPU_ENV}=off")),
        "emulate" => {
            if emu.is_null() {
                return Err("emulated GPU: no host versions of the kernels were given".into());
            }
            // SAFETY: per this function's contract.
            let emu = unsafe { std::slice::from_raw_parts(emu, names.len()) };
            let mut kernels = Vec::with_capacity(names.len());
            for (f, name) in emu.iter().zip(names) {
                kernels.push(f.ok_or_else(|| {
                    format!(
                        "emulated GPU: kernel {name} has no host version (link the .cu file \
                         compiled with -DTF_CUDA_EMULATE)"
                    )
                })?);
            }
            emulate::Emulated::new(kernels).map(Device::Emulated)
        }
        // cudarc panics on a symbol missing from the driver: a reason for the notice too.
        "" | "cuda" => catch_unwind(|| cuda::Cuda::open(source, names))
            .unwrap_or_else(|_| Err("the CUDA driver or NVRTC lacks a function (see above)".into()))
            .map(Device::Cuda),
        other => Err(format!(
            "unknown {GPU_ENV}={other:?} (expected off, emulate or cuda)"
        )),
    }
}

/// Compiles and loads the kernels `names` of `source` on the device, or returns NULL (after a
/// one-line notice, the first time) when there is none.
///
/// # Safety
/// `source` is a NUL-terminated string; `names` points to `n` NUL-terminated strings; `emu` is
/// null or points to `n` entries (each null or a function).
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_load(
    source: *const c_char,
    names: *const *const c_char,
    emu: *const Option<EmuFn>,
    n: c_int,
) -> *mut TfGpu {
    guard("tf_gpu_load", || {
        let n = usize::try_from(n)
            .map_err(|_| gpu_err(format!("tf_gpu_load: negative kernel count {n}")))?;
        if source.is_null() || (names.is_null() && n > 0) {
            return Err(gpu_err("tf_gpu_load: NULL source or kernel names".into()));
        }
        // SAFETY: per this function's contract.
        let source = unsafe { CStr::from_ptr(source) }
            .to_string_lossy()
            .into_owned();
        let names: Vec<String> = (0..n)
            .map(|i| {
                // SAFETY: per this function's contract, `n` strings.
                let p = unsafe { *names.add(i) };
                if p.is_null() {
                    return Err(gpu_err(format!("tf_gpu_load: kernel name {i} is NULL")));
                }
                // SAFETY: as above.
                Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            })
            .collect::<Result<_, _>>()?;
        // SAFETY: per this function's contract.
        match unsafe { open(&source, &names, emu) } {
            Ok(device) => Ok(Box::into_raw(Box::new(TfGpu { device, names }))),
            Err(reason) => {
                notice(&reason);
                Ok(std::ptr::null_mut())
            }
        }
    })
}

/// Allocates `bytes` of device memory and copies them from `host`.
///
/// # Safety
/// `m` comes from `tf_gpu_load`; `host` has `bytes` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_copy_in(
    m: *mut TfGpu,
    host: *const c_void,
    bytes: usize,
) -> *mut c_void {
    guard("tf_gpu_copy_in", || {
        // SAFETY: per this function's contract.
        let gpu = unsafe { device(m, "tf_gpu_copy_in") }?;
        if host.is_null() && bytes > 0 {
            return Err(gpu_err("tf_gpu_copy_in: NULL host pointer".into()));
        }
        match &gpu.device {
            Device::Emulated(_) => emulate::copy_in(host, bytes),
            Device::Cuda(d) => d.copy_in(host, bytes),
        }
        .map_err(|e| gpu_err(format!("tf_gpu_copy_in ({bytes} bytes): {e}")))
    })
}

/// Waits for all work of the device, then copies `bytes` of device memory to `host`.
///
/// # Safety
/// `m` comes from `tf_gpu_load`; `host` has `bytes` writable bytes, `dev` (from
/// `tf_gpu_copy_in`) as many readable.
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_copy_out(
    m: *mut TfGpu,
    host: *mut c_void,
    dev: *const c_void,
    bytes: usize,
) {
    guard("tf_gpu_copy_out", || {
        // SAFETY: per this function's contract.
        let gpu = unsafe { device(m, "tf_gpu_copy_out") }?;
        if (host.is_null() || dev.is_null()) && bytes > 0 {
            return Err(gpu_err("tf_gpu_copy_out: NULL pointer".into()));
        }
        match &gpu.device {
            Device::Emulated(d) => {
                d.synchronize();
                emulate::copy_out(host, dev, bytes);
                Ok(())
            }
            Device::Cuda(d) => d.copy_out(host, dev, bytes),
        }
        .map_err(|e| gpu_err(format!("tf_gpu_copy_out ({bytes} bytes): {e}")))
    })
}

/// Releases device memory from `tf_gpu_copy_in`.
///
/// # Safety
/// `m` comes from `tf_gpu_load`; `dev` from `tf_gpu_copy_in` on it, not freed yet, and no
/// launch still running uses it.
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_free(m: *mut TfGpu, dev: *mut c_void) {
    guard("tf_gpu_free", || {
        // SAFETY: per this function's contract.
        let gpu = unsafe { device(m, "tf_gpu_free") }?;
        if dev.is_null() {
            return Ok(()); // like free(NULL)
        }
        match &gpu.device {
            Device::Emulated(_) => {
                emulate::free(dev);
                Ok(())
            }
            Device::Cuda(d) => d.free(dev),
        }
        .map_err(|e| gpu_err(format!("tf_gpu_free: {e}")))
    })
}

/// Creates a launch graph on the device.
///
/// # Safety
/// `m` comes from `tf_gpu_load`.
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_graph_begin(m: *mut TfGpu) -> *mut TfGpuGraph {
    guard("tf_gpu_graph_begin", || {
        // SAFETY: per this function's contract; a `tf_gpu` lives as long as the process.
        let gpu: &'static TfGpu = unsafe { device(m, "tf_gpu_graph_begin") }?;
        Ok(Box::into_raw(Box::new(TfGpuGraph {
            graph: GpuGraph::new(gpu),
            owner: current_thread(),
        })))
    })
}

/// Declares a key space (a task class); returns its id (0, 1, 2, ... in declaration order).
///
/// # Safety
/// `g` comes from `tf_gpu_graph_begin`; `name` is null or NUL-terminated; `lo` and `hi` point
/// to `ndims` values each.
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_stream_new(
    g: *mut TfGpuGraph,
    name: *const c_char,
    ndims: c_int,
    lo: *const c_long,
    hi: *const c_long,
) -> c_int {
    guard("tf_gpu_stream_new", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_gpu_stream_new") }?;
        // SAFETY: per this function's contract.
        let (name, lo, hi) = unsafe { read_stream(name, ndims, lo, hi, "tf_gpu_stream_new") }?;
        let id = graph.stream_new(name, &lo, &hi);
        c_int::try_from(id).map_err(|_| gpu_err("too many streams".into()))
    })
}

/// Starts describing the task that produces `(out_stream, key)`.
///
/// # Safety
/// `g` comes from `tf_gpu_graph_begin`; `key` points to the stream's `ndims` values.
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_task_begin(
    g: *mut TfGpuGraph,
    out_stream: c_int,
    key: *const c_long,
) {
    guard("tf_gpu_task_begin", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_gpu_task_begin") }?;
        // SAFETY: as above.
        let (out, key) = unsafe { key_of(graph, out_stream, key, "tf_gpu_task_begin") }?;
        graph.task_begin(out, &key).map_err(gpu_err)
    })
}

/// Makes the current task wait for the task that produced `(stream, key)`.
///
/// # Safety
/// `g` comes from `tf_gpu_graph_begin`; `key` points to the stream's `ndims` values.
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_task_input(g: *mut TfGpuGraph, stream: c_int, key: *const c_long) {
    guard("tf_gpu_task_input", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_gpu_task_input") }?;
        // SAFETY: as above.
        let (id, key) = unsafe { key_of(graph, stream, key, "tf_gpu_task_input") }?;
        graph.task_input(id, &key).map_err(gpu_err)
    })
}

/// Launches kernel `kernel` for the current task, after its inputs and its earlier launches.
///
/// # Safety
/// `g` comes from `tf_gpu_graph_begin`; `grid` and `block` point to three values; `args` and
/// `sizes` to `nargs` entries, `args[i]` to `sizes[i]` readable bytes (read during the call).
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_launch(
    g: *mut TfGpuGraph,
    kernel: c_int,
    grid: *const c_uint,
    block: *const c_uint,
    nargs: c_int,
    args: *mut *mut c_void,
    sizes: *const usize,
) {
    guard("tf_gpu_launch", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_gpu_launch") }?;
        // SAFETY: as above.
        let grid = unsafe { dim3(grid, "grid") }?;
        // SAFETY: as above.
        let block = unsafe { dim3(block, "block") }?;
        let n = usize::try_from(nargs)
            .map_err(|_| gpu_err(format!("tf_gpu_launch: negative nargs {nargs}")))?;
        let (args, sizes) = if n == 0 {
            (&[][..], &[][..])
        } else {
            if args.is_null() || sizes.is_null() {
                return Err(gpu_err("tf_gpu_launch: NULL args or sizes".into()));
            }
            // SAFETY: per this function's contract, `n` entries each.
            unsafe {
                (
                    std::slice::from_raw_parts(args, n),
                    std::slice::from_raw_parts(sizes, n),
                )
            }
        };
        if let Some(i) = args
            .iter()
            .zip(sizes)
            .position(|(a, &s)| a.is_null() && s > 0)
        {
            return Err(gpu_err(format!("tf_gpu_launch: argument {i} is NULL")));
        }
        graph
            .launch(i64::from(kernel), grid, block, args, sizes)
            .map_err(gpu_err)
    })
}

/// Ends the current task: its event is recorded after its launches.
///
/// # Safety
/// `g` comes from `tf_gpu_graph_begin`.
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_task_end(g: *mut TfGpuGraph) {
    guard("tf_gpu_task_end", || {
        // SAFETY: per this function's contract.
        let graph = unsafe { graph(g, "tf_gpu_task_end") }?;
        graph.task_end().map_err(gpu_err)
    })
}

/// Waits for every launch of the graph, reports a failure, and frees the graph.
///
/// # Safety
/// `g` comes from `tf_gpu_graph_begin` and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn tf_gpu_graph_end(g: *mut TfGpuGraph) {
    guard("tf_gpu_graph_end", || {
        // SAFETY: per this function's contract (checks null and thread before we take it).
        unsafe { graph(g, "tf_gpu_graph_end") }?;
        // SAFETY: a live graph of this thread, given up by the caller.
        let mut g = unsafe { Box::from_raw(g) };
        g.graph.end().map_err(gpu_err)
    })
}
