//! Compiling CUDA source with NVRTC for a given architecture, without a GPU: what the cuda
//! target writes (`out.cu`) must compile for the GPUs it targets ([`ARCHS`]).
//!
//! NVRTC is the PyPI package `nvidia-cuda-nvrtc-cu12` that `make deps` installs, found and
//! loaded at run time by `streamrt_gpu::nvrtc` (also `TILEDFLOW_NVRTC_LIB`, a directory holding
//! `libnvrtc.so.12`). When it cannot be found, these helpers panic with a message saying to run
//! `make deps`: a test that needs NVRTC fails without it, it never passes silently.

/// The architectures the cuda target's kernels are checked for (A100, H100).
pub const ARCHS: [&str; 2] = ["sm_80", "sm_90"];

/// Compiles `source` (named `name` in messages) for `arch` (`sm_80`, ...) and returns the CUBIN,
/// or NVRTC's log when the source does not compile. Panics when NVRTC is missing or fails
/// otherwise.
pub fn compile_cuda(source: &str, name: &str, arch: &str) -> Result<Vec<u8>, String> {
    use streamrt_gpu::nvrtc::{compile, NvrtcError};
    match compile(source, name, arch, streamrt_gpu::nvrtc::KERNEL_OPTIONS) {
        Ok(cubin) => Ok(cubin),
        Err(NvrtcError::Compile { log, .. }) => Err(log),
        Err(e @ NvrtcError::NotFound(_)) => panic!("{e}\nThis test needs NVRTC: run `make deps`."),
        Err(e) => panic!("{e}"),
    }
}

/// Compiles `source` for every architecture of [`ARCHS`]; panics with NVRTC's log (and the
/// source's numbered lines around the first error) when it does not compile.
pub fn expect_compiles(source: &str, name: &str) {
    for arch in ARCHS {
        if let Err(log) = compile_cuda(source, name, arch) {
            panic!(
                "{name} does not compile for {arch} with NVRTC:\n{log}\n--- {name}:\n{}",
                numbered(source)
            );
        }
    }
}

fn numbered(source: &str) -> String {
    source
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{:5} {l}\n", i + 1))
        .collect()
}
