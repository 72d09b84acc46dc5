//! NVRTC, CUDA's run-time compiler, loaded at run time: finding `libnvrtc.so.12` and compiling
//! CUDA C++ source to a CUBIN for one architecture (`sm_80`, `sm_90`, ...).
//!
//! Used by the GPU path (`tf_gpu_load` compiles the kernels for the device it found) and by the
//! tests, which compile generated kernels without a GPU. It owns nothing else: no device, no
//! module loading (that is `gpu::cuda`).
//!
//! Where the library is looked for, in this order (the first that exists wins):
//! 1. [`LIB_DIR_ENV`] (`TILEDFLOW_NVRTC_LIB`): a directory holding `libnvrtc.so.12`;
//! 2. the system's search path (`LD_LIBRARY_PATH`, `ldconfig`): `libnvrtc.so.12`;
//! 3. the PyPI package `nvidia-cuda-nvrtc-cu12` that `make deps` installs: its directory is
//!    asked from `python3` (`nvidia.cuda_nvrtc.__path__` + `/lib`).
//!
//! The library found is opened by its full path and kept open; cudarc's bindings (dynamic
//! loading, CUDA 12.9 bindings) then open it by its soname, which the dynamic loader resolves
//! to the library already loaded. cudarc is never asked before a library was found (it panics
//! when it finds none).

use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use cudarc::nvrtc::sys;

/// Environment variable naming the directory that holds `libnvrtc.so.12`.
pub const LIB_DIR_ENV: &str = "TILEDFLOW_NVRTC_LIB";

/// The file name (and soname) of the NVRTC this crate's bindings are for.
pub const LIB_NAME: &str = "libnvrtc.so.12";

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NvrtcError {
    /// No NVRTC library was found; the message says where it was looked for.
    #[error("NVRTC ({LIB_NAME}) not found: {0}; run `make deps` (installs the PyPI package nvidia-cuda-nvrtc-cu12) or set {LIB_DIR_ENV} to the directory holding {LIB_NAME}")]
    NotFound(String),
    /// The source does not compile; `log` is NVRTC's log.
    #[error("NVRTC could not compile {name} for {arch}:\n{log}")]
    Compile {
        /// The program's name (as in the log's messages).
        name: String,
        /// The architecture asked for.
        arch: String,
        /// NVRTC's compilation log.
        log: String,
    },
    /// Another NVRTC call failed.
    #[error("NVRTC: {0}")]
    Api(String),
}

/// The loaded library's path, or why there is none; looked for once per process.
fn library() -> Result<&'static Path, NvrtcError> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND
        .get_or_init(find_and_open)
        .as_deref()
        .map_err(|e| NvrtcError::NotFound(e.clone()))
}

/// Opens the first library found (see the module doc) and keeps it open for the process.
fn find_and_open() -> Result<PathBuf, String> {
    let mut tried = Vec::new();
    let mut open = |path: PathBuf| {
        // SAFETY: loading NVRTC runs its initializers, which have no preconditions.
        match unsafe { libloading::Library::new(&path) } {
            Ok(lib) => {
                // Kept open for the whole process: cudarc's symbols point into it.
                std::mem::forget(lib);
                Some(path)
            }
            Err(e) => {
                tried.push(format!("{}: {e}", path.display()));
                None
            }
        }
    };
    if let Some(dir) = std::env::var_os(LIB_DIR_ENV).filter(|d| !d.is_empty()) {
        if let Some(found) = open(Path::new(&dir).join(LIB_NAME)) {
            return Ok(found);
        }
    }
    if let Some(found) = open(PathBuf::from(LIB_NAME)) {
        return Ok(found);
    }
    // Only now ask python3 (a subprocess): the cases above need none.
    match pypi_lib_dir() {
        Ok(dir) => {
            if let Some(found) = open(dir.join(LIB_NAME)) {
                return Ok(found);
            }
        }
        Err(why) => tried.push(why),
    }
    Err(tried.join("; "))
}

/// The `lib` directory of the PyPI package `nvidia-cuda-nvrtc-cu12`, asked from `python3`.
fn pypi_lib_dir() -> Result<PathBuf, String> {
    const QUERY: &str =
        "import os, nvidia.cuda_nvrtc as m; print(os.path.join(list(m.__path__)[0], 'lib'))";
    let output = Command::new("python3")
        .args(["-c", QUERY])
        .output()
        .map_err(|e| format!("cannot run python3 to find the PyPI package: {e}"))?;
    if !output.status.success() {
        return Err("python3 has no module nvidia.cuda_nvrtc (PyPI nvidia-cuda-nvrtc-cu12)".into());
    }
    let dir = String::from_utf8_lossy(&output.stdout).trim().to_string();
    Ok(PathBuf::from(dir))
}

/// Finds and loads NVRTC (once per process); returns the path it was loaded from (as found:
/// a bare file name when it came from the system's search path).
pub fn load() -> Result<&'static Path, NvrtcError> {
    library()
}

/// The version of the loaded NVRTC, `(major, minor)`.
pub fn version() -> Result<(i32, i32), NvrtcError> {
    library()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-parameters; the library is loaded.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    check(status, "nvrtcVersion")?;
    Ok((major, minor))
}

fn check(status: sys::nvrtcResult, call: &str) -> Result<(), NvrtcError> {
    if status == sys::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    // SAFETY: NVRTC returns a static string for every status.
    let text = unsafe { CStr::from_ptr(sys::nvrtcGetErrorString(status)) };
    Err(NvrtcError::Api(format!(
        "{call}: {}",
        text.to_string_lossy()
    )))
}

/// A program, destroyed on drop.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram and destroyed only here.
        unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
    }
}

impl Program {
    fn log(&self) -> Result<String, NvrtcError> {
        let mut size = 0usize;
        // SAFETY: a live program and a valid out-parameter.
        check(
            unsafe { sys::nvrtcGetProgramLogSize(self.0, &mut size) },
            "nvrtcGetProgramLogSize",
        )?;
        let mut log = vec![0u8; size.max(1)];
        // SAFETY: the buffer holds `size` bytes, as NVRTC asked.
        check(
            unsafe { sys::nvrtcGetProgramLog(self.0, log.as_mut_ptr().cast::<c_char>()) },
            "nvrtcGetProgramLog",
        )?;
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        Ok(String::from_utf8_lossy(&log[..end]).trim_end().to_string())
    }
}

/// The NVRTC options of tiledflow's kernels: no fused multiply-add, so that every operation
/// rounds as the original C program's does (C compilers for x86-64 do not contract `a * b + c`
/// unless told to; NVRTC does by default, which changes results in the last bits).
pub const KERNEL_OPTIONS: &[&str] = &["--fmad=false"];

/// Compiles `source` (CUDA C++, no system headers) for `arch` (`sm_80`, `sm_90`, ...) and
/// returns the CUBIN. `name` names the program in NVRTC's messages (e.g. `out.cu`). `options`
/// are passed to NVRTC after `--gpu-architecture=<arch>`.
pub fn compile(
    source: &str,
    name: &str,
    arch: &str,
    options: &[&str],
) -> Result<Vec<u8>, NvrtcError> {
    library()?;
    let src =
        CString::new(source).map_err(|_| NvrtcError::Api("source contains a NUL byte".into()))?;
    let cname =
        CString::new(name).map_err(|_| NvrtcError::Api("name contains a NUL byte".into()))?;
    let mut raw = std::ptr::null_mut();
    // SAFETY: valid strings that outlive the program; no headers.
    let status = unsafe {
        sys::nvrtcCreateProgram(
            &mut raw,
            src.as_ptr(),
            cname.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    check(status, "nvrtcCreateProgram")?;
    let prog = Program(raw);
    let mut all = vec![format!("--gpu-architecture={arch}")];
    all.extend(options.iter().map(|o| o.to_string()));
    let all: Vec<CString> = all
        .into_iter()
        .map(|o| {
            CString::new(o).map_err(|_| NvrtcError::Api("an option contains a NUL byte".into()))
        })
        .collect::<Result<_, _>>()?;
    let pointers: Vec<*const c_char> = all.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: a live program and `pointers.len()` valid option strings.
    let status =
        unsafe { sys::nvrtcCompileProgram(prog.0, pointers.len() as i32, pointers.as_ptr()) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        let log = prog.log()?;
        // SAFETY: NVRTC returns a static string for every status.
        let what = unsafe { CStr::from_ptr(sys::nvrtcGetErrorString(status)) };
        return Err(NvrtcError::Compile {
            name: name.to_string(),
            arch: arch.to_string(),
            log: if log.is_empty() {
                what.to_string_lossy().into_owned()
            } else {
                log
            },
        });
    }
    let mut size = 0usize;
    // SAFETY: a compiled program and a valid out-parameter.
    check(
        unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) },
        "nvrtcGetCUBINSize",
    )?;
    if size == 0 {
        return Err(NvrtcError::Api(format!(
            "no CUBIN for {arch} (a virtual architecture such as compute_XY gives only PTX)"
        )));
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: the buffer holds `size` bytes, as NVRTC asked.
    check(
        unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast::<c_char>()) },
        "nvrtcGetCUBIN",
    )?;
    Ok(cubin)
}
