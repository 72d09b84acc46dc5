//! The real device: CUDA's driver API through cudarc, with `libcuda` and NVRTC loaded at run
//! time (no CUDA is needed to build or to start a program).
//!
//! NOT YET RUN ON HARDWARE: this module is compiled and its fallback (no `libcuda`) is tested,
//! but no test has run it on a GPU. It is kept small and plain for that reason.
//!
//! [`Cuda::open`]: device 0's primary context; NVRTC compiles the source for the device's
//! compute capability (`sm_XY`, a CUBIN) and the module is loaded from it; each kernel is looked
//! up by name; [`POOL`](super::POOL) blocking streams are created (blocking: they are ordered
//! after the synchronous copies of `tf_gpu_copy_in`, which use the legacy default stream). Every
//! call makes the context current on the calling thread first. Events are created without timing
//! and destroyed when their graph ends.

use std::ffi::{c_void, CString};

use cudarc::driver::result as cu;
use cudarc::driver::sys;

use super::{Launch, POOL};

/// Formats a driver error by its name (`CUDA_ERROR_...`).
fn err(call: &str, e: cu::DriverError) -> String {
    let name = e
        .error_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    format!("{call}: {name}")
}

/// The device, its context, module, kernels and streams.
pub(crate) struct Cuda {
    context: sys::CUcontext,
    _module: sys::CUmodule,
    functions: Vec<sys::CUfunction>,
    streams: Vec<sys::CUstream>,
}

// SAFETY: driver handles may be used from any thread once the context is current there, which
// every method ensures first (`current`).
unsafe impl Send for Cuda {}
// SAFETY: as above; the driver API is thread-safe.
unsafe impl Sync for Cuda {}

/// A recorded event, destroyed on drop.
pub(crate) struct Event(sys::CUevent);

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by `Cuda::record`, destroyed only here (the driver defers the
        // destruction of an event that is still pending).
        unsafe { cu::event::destroy(self.0) }.ok();
    }
}

impl Cuda {
    /// Opens device 0 and loads `source`'s kernels `names`. `Err` is the reason, for the notice.
    pub(crate) fn open(source: &str, names: &[String]) -> Result<Cuda, String> {
        // SAFETY: only tries to open the library (dlopen).
        if !unsafe { sys::is_culib_present() } {
            return Err("no CUDA driver (libcuda.so) found".into());
        }
        cu::init().map_err(|e| err("cuInit", e))?;
        let count = cu::device::get_count().map_err(|e| err("cuDeviceGetCount", e))?;
        if count < 1 {
            return Err("no CUDA device".into());
        }
        let device = cu::device::get(0).map_err(|e| err("cuDeviceGet", e))?;
        let attribute = |a| {
            // SAFETY: `device` comes from cuDeviceGet.
            unsafe { cu::device::get_attribute(device, a) }
                .map_err(|e| err("cuDeviceGetAttribute", e))
        };
        let major =
            attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor =
            attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let arch = format!("sm_{major}{minor}");
        // Compiled once per machine (`crate::nvrtc_cache`; TILEDFLOW_GPU_CACHE=off: every time).
        let cache = crate::nvrtc_cache::dir_from_env();
        let cubin = crate::nvrtc_cache::compile(
            cache.as_deref(),
            source,
            "tiledflow.cu",
            &arch,
            crate::nvrtc::KERNEL_OPTIONS,
        )
        .map(|(cubin, _)| cubin)
        .map_err(|e| match e {
            crate::nvrtc::NvrtcError::Compile { log, .. } => format!(
                "NVRTC could not compile the kernels for {arch}: {}",
                log.lines()
                    .find(|l| l.contains("error"))
                    .unwrap_or("(no log)")
            ),
            other => other
                .to_string()
                .lines()
                .next()
                .unwrap_or_default()
                .to_string(),
        })?;
        // SAFETY: `device` comes from cuDeviceGet.
        let context = unsafe { cu::primary_ctx::retain(device) }
            .map_err(|e| err("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: a context retained above.
        unsafe { cu::ctx::set_current(context) }.map_err(|e| err("cuCtxSetCurrent", e))?;
        // SAFETY: a complete CUBIN image from NVRTC.
        let module = unsafe { cu::module::load_data(cubin.as_ptr().cast()) }
            .map_err(|e| err("cuModuleLoadData", e))?;
        let mut functions = Vec::with_capacity(names.len());
        for name in names {
            let cname = CString::new(name.as_str())
                .map_err(|_| format!("kernel name {name:?} contains a NUL"))?;
            // SAFETY: a loaded module.
            let f = unsafe { cu::module::get_function(module, cname) }
                .map_err(|e| err(&format!("cuModuleGetFunction({name})"), e))?;
            functions.push(f);
        }
        let streams = (0..POOL)
            .map(|_| {
                cu::stream::create(cu::stream::StreamKind::Default)
                    .map_err(|e| err("cuStreamCreate", e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Cuda {
            context,
            _module: module,
            functions,
            streams,
        })
    }

    /// Makes the device's context current on the calling thread.
    fn current(&self) -> Result<(), String> {
        // SAFETY: the primary context retained in `open`, never released.
        unsafe { cu::ctx::set_current(self.context) }.map_err(|e| err("cuCtxSetCurrent", e))
    }

    pub(crate) fn record(&self, stream: usize) -> Result<Event, String> {
        self.current()?;
        let event = cu::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map_err(|e| err("cuEventCreate", e))?;
        let event = Event(event);
        // SAFETY: a live event and stream of this context.
        unsafe { cu::event::record(event.0, self.streams[stream]) }
            .map_err(|e| err("cuEventRecord", e))?;
        Ok(event)
    }

    pub(crate) fn wait(&self, stream: usize, event: &Event) -> Result<(), String> {
        self.current()?;
        // SAFETY: a live stream and a recorded event of this context.
        unsafe {
            cu::stream::wait_event(
                self.streams[stream],
                event.0,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(|e| err("cuStreamWaitEvent", e))
    }

    pub(crate) fn launch(&self, stream: usize, launch: &Launch) -> Result<(), String> {
        self.current()?;
        let mut params: Vec<*mut c_void> = launch.args.to_vec();
        let [gx, gy, gz] = launch.grid;
        let [bx, by, bz] = launch.block;
        // SAFETY: a function of the loaded module; `params` points at the arguments, which
        // cuLaunchKernel copies before it returns (their sizes come from the kernel's signature).
        unsafe {
            cu::launch_kernel(
                self.functions[launch.kernel],
                (gx, gy, gz),
                (bx, by, bz),
                0,
                self.streams[stream],
                &mut params,
            )
        }
        .map_err(|e| err("cuLaunchKernel", e))
    }

    /// Waits for the pool's streams (the end of a graph, a copy out).
    pub(crate) fn synchronize(&self) -> Result<(), String> {
        self.current()?;
        for &s in &self.streams {
            // SAFETY: a live stream of this context.
            unsafe { cu::stream::synchronize(s) }.map_err(|e| err("cuStreamSynchronize", e))?;
        }
        Ok(())
    }

    pub(crate) fn copy_in(&self, host: *const c_void, bytes: usize) -> Result<*mut c_void, String> {
        self.current()?;
        // SAFETY: an allocation of at least one byte in the current context.
        let dev = unsafe { cu::malloc_sync(bytes.max(1)) }.map_err(|e| err("cuMemAlloc", e))?;
        if bytes > 0 {
            // SAFETY: `host` has `bytes` readable bytes (tf_gpu_copy_in's contract).
            let src = unsafe { std::slice::from_raw_parts(host.cast::<u8>(), bytes) };
            // SAFETY: `dev` has `bytes` bytes.
            unsafe { cu::memcpy_htod_sync(dev, src) }.map_err(|e| err("cuMemcpyHtoD", e))?;
        }
        Ok(dev as *mut c_void)
    }

    pub(crate) fn copy_out(
        &self,
        host: *mut c_void,
        dev: *const c_void,
        bytes: usize,
    ) -> Result<(), String> {
        self.synchronize()?;
        if bytes > 0 {
            // SAFETY: `host` has `bytes` writable bytes (tf_gpu_copy_out's contract).
            let dst = unsafe { std::slice::from_raw_parts_mut(host.cast::<u8>(), bytes) };
            // SAFETY: `dev` has `bytes` bytes (from tf_gpu_copy_in).
            unsafe { cu::memcpy_dtoh_sync(dst, dev as sys::CUdeviceptr) }
                .map_err(|e| err("cuMemcpyDtoH", e))?;
        }
        Ok(())
    }

    pub(crate) fn free(&self, dev: *mut c_void) -> Result<(), String> {
        self.current()?;
        // SAFETY: `dev` comes from `copy_in` (tf_gpu_free's contract).
        unsafe { cu::free_sync(dev as sys::CUdeviceptr) }.map_err(|e| err("cuMemFree", e))
    }
}
