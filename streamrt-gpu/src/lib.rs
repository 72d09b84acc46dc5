//! streamrt-gpu: the GPU path of streamrt's C ABI (`tf_gpu_*`, the second part of
//! `streamrt/include/streamrt.h`).
//!
//! Its static library, `libstreamrt_gpu.a`, holds all of streamrt and the GPU path; programs of
//! the cuda target link it instead of `libstreamrt.a`. The path is a crate of its own so that
//! the CPU targets' programs link no CUDA code: cudarc's bindings (thousands of functions, about
//! 5 MB of a program) come only with this library.
//!
//! Modules:
//! - [`gpu`]: launch graphs on CUDA streams and events, the emulated device
//!   (`TILEDFLOW_GPU=emulate`) and the real one (cudarc, loaded at run time); its `abi`
//!   submodule is the C ABI, with the checks and the fatal exit of [`streamrt::ffi`].
//! - [`nvrtc`]: finding NVRTC and compiling kernels with it; [`nvrtc_cache`]: the per-machine
//!   cache of compiled kernels.
//!
//! It knows nothing of the compiler; of streamrt it uses the C ABI's helpers (argument checks,
//! the panic guard) and its error type.

#![warn(missing_docs, unsafe_op_in_unsafe_fn)]

pub mod gpu;
pub mod nvrtc;
pub mod nvrtc_cache;
