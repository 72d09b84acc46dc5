//! The NVRTC helper (`testsuite::nvrtc`): compiles CUDA source for sm_80 and sm_90 without a
//! GPU, passes the architecture through, and reports a syntax error with NVRTC's log; and
//! streamrt's cache of compiled kernels (`streamrt_gpu::nvrtc_cache`). Fails (saying to run
//! `make deps`) when NVRTC is not installed.

use testsuite::nvrtc::{compile_cuda, expect_compiles, ARCHS};

const SAXPY: &str = r#"
extern "C" __global__ void saxpy(double *y, const double *x, double a, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}
"#;

#[test]
fn a_small_kernel_compiles_to_a_cubin_for_each_architecture() {
    expect_compiles(SAXPY, "saxpy.cu");
    for arch in ARCHS {
        let cubin = compile_cuda(SAXPY, "saxpy.cu", arch).unwrap();
        assert_eq!(&cubin[..4], b"\x7fELF", "{arch}: a CUBIN is an ELF image");
        let text = String::from_utf8_lossy(&cubin);
        assert!(
            text.contains("saxpy"),
            "{arch}: the CUBIN lacks the kernel's symbol"
        );
    }
}

#[test]
fn the_architecture_reaches_the_compiler() {
    let src = "#if __CUDA_ARCH__ < 900\n#error this kernel needs sm_90\n#endif\n\
               extern \"C\" __global__ void k(int *p) { *p = 1; }\n";
    compile_cuda(src, "hopper.cu", "sm_90").unwrap();
    let log = compile_cuda(src, "hopper.cu", "sm_80").unwrap_err();
    assert!(log.contains("this kernel needs sm_90"), "log:\n{log}");
}

#[test]
fn a_syntax_error_is_reported_with_nvrtcs_log() {
    let src = "extern \"C\" __global__ void k(double *p)\n{\n    p[0] = 1.0 +;\n}\n";
    for arch in ARCHS {
        let log = compile_cuda(src, "broken.cu", arch).unwrap_err();
        assert!(
            log.contains("broken.cu(3)") && log.contains("error"),
            "{arch}: the log should point at broken.cu line 3:\n{log}"
        );
    }
}

/// streamrt's CUBIN cache with the real NVRTC: the second compilation of a source is a hit with
/// the same CUBIN, other options are a miss, an entry corrupted or cut short is ignored,
/// recompiled and replaced, and without a directory nothing is cached.
#[test]
fn compiled_kernels_are_cached_and_a_corrupt_entry_is_compiled_again() {
    use streamrt_gpu::nvrtc::{version, KERNEL_OPTIONS};
    use streamrt_gpu::nvrtc_cache::{compile, entry_path, key, Outcome};
    let dir = tempfile::tempdir().unwrap();
    let nvrtc = |e: streamrt_gpu::nvrtc::NvrtcError| -> ! {
        panic!("{e}\nThis test needs NVRTC: run `make deps`.")
    };
    let cached = |options: &[&str]| {
        compile(Some(dir.path()), SAXPY, "saxpy.cu", "sm_80", options).unwrap_or_else(|e| nvrtc(e))
    };
    let (first, outcome) = cached(KERNEL_OPTIONS);
    assert_eq!(outcome, Outcome::Compiled);
    assert_eq!(&first[..4], b"\x7fELF");
    assert_eq!(cached(KERNEL_OPTIONS), (first.clone(), Outcome::Hit));
    assert_eq!(
        cached(&[]).1,
        Outcome::Compiled,
        "other options, another entry"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "two entries, no temporaries left"
    );

    let entry = entry_path(
        dir.path(),
        &key(
            version().unwrap_or_else(|e| nvrtc(e)),
            "sm_80",
            "saxpy.cu",
            KERNEL_OPTIONS,
            SAXPY,
        ),
    );
    let whole = std::fs::read(&entry).unwrap();
    let mut flipped = whole.clone();
    *flipped.last_mut().unwrap() ^= 1;
    for corrupt in [
        flipped,
        whole[..whole.len() / 2].to_vec(),
        b"not an entry".to_vec(),
    ] {
        std::fs::write(&entry, corrupt).unwrap();
        let (cubin, outcome) = cached(KERNEL_OPTIONS);
        assert_eq!(outcome, Outcome::Compiled, "a corrupt entry is not used");
        assert_eq!(&cubin[..4], b"\x7fELF");
        assert_eq!(
            cached(KERNEL_OPTIONS).1,
            Outcome::Hit,
            "the entry was replaced"
        );
    }

    let (cubin, outcome) =
        compile(None, SAXPY, "saxpy.cu", "sm_80", KERNEL_OPTIONS).unwrap_or_else(|e| nvrtc(e));
    assert_eq!((&cubin[..4], outcome), (&b"\x7fELF"[..], Outcome::Uncached));
}
