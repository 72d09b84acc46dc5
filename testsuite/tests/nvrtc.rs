//! The NVRTC helper (`testsuite::nvrtc`): compiles CUDA source for sm_80 and sm_90 without a
//! GPU, passes the architecture through, and reports a syntax error with NVRTC's log. Fails
//! (saying to run `make deps`) when NVRTC is not installed.

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
