//! The differential oracle: build a kernel with the reference compiler and with each
//! [`Variant`], run all of them, and require every dumped array to agree.
//!
//! All builds share the same base flags ([`original_flags`]): `-O2 -ffp-contract=off`, the
//! PolyBench utilities on the include path, `-DPOLYBENCH_DUMP_ARRAYS` and the caller's defines.
//! A variant's own arguments come after them, so they win where they conflict (`-O0`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::compare::{compare, Tolerance};
use crate::dump::{parse_dump, DumpedArray};
use crate::paths::{kernel_path, reference_cc, tool_path, utilities_dir};
use crate::process::{compile, compile_in_env, expect_success, run, DEFAULT_COMPILE_TIMEOUT};

/// How to build and run the transformed program: a compiler driver taking `cc`'s flags, the
/// arguments added after the base flags, and the environment of the build and of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    name: String,
    driver: PathBuf,
    args: Vec<String>,
    compile_env: Vec<(String, String)>,
    run_env: Vec<(String, String)>,
}

impl Variant {
    /// A variant built by `driver` (a path, or a command name looked up in `PATH`).
    pub fn new(name: impl Into<String>, driver: impl Into<PathBuf>) -> Self {
        Variant {
            name: name.into(),
            driver: driver.into(),
            args: Vec::new(),
            compile_env: Vec::new(),
            run_env: Vec::new(),
        }
    }

    /// Whether `other` is built exactly as this variant is (driver, arguments, build
    /// environment): the two may differ only in how they run.
    fn builds_as(&self, other: &Variant) -> bool {
        self.driver == other.driver
            && self.args == other.args
            && self.compile_env == other.compile_env
    }

    /// A variant built by the system `cc` (useful to test the harness itself, or as a baseline).
    pub fn cc(name: impl Into<String>) -> Self {
        Variant::new(name, "cc")
    }

    /// A variant built by the `tiledflow-cc` of [`crate::bin_dir`]; fails if it is not built.
    pub fn tiledflow_cc(name: impl Into<String>) -> Result<Self> {
        Ok(Variant::new(name, tool_path("tiledflow-cc")?))
    }

    /// Adds an argument for the driver (after the base flags).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments for the driver (after the base flags).
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for running the built program (e.g.
    /// `TILEDFLOW_NUM_THREADS=2`).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.run_env.push((key.into(), value.into()));
        self
    }

    /// Sets an environment variable for the driver while it builds the program.
    pub fn compile_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.compile_env.push((key.into(), value.into()));
        self
    }

    /// The name used in reports.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The compiler driver.
    pub fn driver(&self) -> &Path {
        &self.driver
    }

    /// The arguments added after the base flags.
    pub fn extra_args(&self) -> &[String] {
        &self.args
    }

    /// The environment of the run.
    pub fn run_env(&self) -> &[(String, String)] {
        &self.run_env
    }
}

/// Settings of a differential run.
#[derive(Debug, Clone, PartialEq)]
pub struct DifferentialOptions {
    /// How the variants' arrays must agree with the reference's.
    pub tolerance: Tolerance,
    /// Time limit for each program run (a hung program fails the check).
    pub run_timeout: Duration,
    /// Time limit for each variant's build (a compiler that runs away fails the check).
    pub compile_timeout: Duration,
}

impl Default for DifferentialOptions {
    fn default() -> Self {
        DifferentialOptions {
            tolerance: Tolerance::Exact,
            run_timeout: Duration::from_secs(120),
            compile_timeout: DEFAULT_COMPILE_TIMEOUT,
        }
    }
}

/// `-DNAME=VALUE` for each define, `-DNAME` where the value is empty (e.g.
/// `("MINI_DATASET", "")`). Names must be C identifiers.
pub fn define_flags(defines: &[(&str, &str)]) -> Result<Vec<String>> {
    defines
        .iter()
        .map(|&(name, value)| {
            let is_ident = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !is_ident {
                bail!("define `{name}` is not a C identifier");
            }
            Ok(if value.is_empty() {
                format!("-D{name}")
            } else {
                format!("-D{name}={value}")
            })
        })
        .collect()
}

/// The flags every build of a differential run gets: `-O2 -ffp-contract=off -I <utilities>
/// -DPOLYBENCH_DUMP_ARRAYS` and the defines.
pub fn original_flags(defines: &[(&str, &str)]) -> Result<Vec<String>> {
    let mut flags = vec![
        "-O2".to_string(),
        "-ffp-contract=off".to_string(),
        "-I".to_string(),
        utilities_dir().display().to_string(),
        "-DPOLYBENCH_DUMP_ARRAYS".to_string(),
    ];
    flags.extend(define_flags(defines)?);
    Ok(flags)
}

/// The kernel's source, or an error saying it does not exist.
fn kernel_source(kernel: &str) -> Result<PathBuf> {
    let src = kernel_path(kernel);
    if !src.is_file() {
        bail!("no kernel `{kernel}`: {} does not exist", src.display());
    }
    Ok(src)
}

/// Builds `kernel` with the reference compiler and the base flags, runs it, and returns the
/// arrays it dumped (at least one).
pub fn run_original(kernel: &str, defines: &[(&str, &str)]) -> Result<Vec<DumpedArray>> {
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-diff.")
        .tempdir()?;
    build_and_run_original(kernel, defines, dir.path(), &DifferentialOptions::default())
}

fn build_and_run_original(
    kernel: &str,
    defines: &[(&str, &str)],
    dir: &Path,
    options: &DifferentialOptions,
) -> Result<Vec<DumpedArray>> {
    let src = kernel_source(kernel)?;
    let flags = original_flags(defines)?;
    let exe = dir.join("original");
    compile(reference_cc(), &[&src], &flags, &exe).context("building the reference")?;
    let output = run(&exe, &[], options.run_timeout).context("running the reference")?;
    expect_success("the reference", &output)?;
    let arrays = parse_dump(&String::from_utf8_lossy(&output.stderr))
        .context("reading the reference's dump")?;
    if arrays.is_empty() {
        bail!("the reference dumped no arrays");
    }
    Ok(arrays)
}

/// Builds `variant` as `exe`.
fn build_variant(
    src: &Path,
    flags: &[String],
    variant: &Variant,
    exe: &Path,
    options: &DifferentialOptions,
) -> Result<()> {
    let mut all_flags = flags.to_vec();
    all_flags.extend(variant.args.iter().cloned());
    compile_in_env(
        &variant.driver,
        &[src],
        &all_flags,
        exe,
        &variant.compile_env,
        options.compile_timeout,
    )
    .context("building")?;
    Ok(())
}

/// Runs `exe` (built for `variant`) in the variant's environment and compares its dump with
/// `expected`.
fn run_variant(
    variant: &Variant,
    exe: &Path,
    expected: &[DumpedArray],
    options: &DifferentialOptions,
) -> Result<()> {
    let env: Vec<(&str, &str)> = variant
        .run_env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let output = run(exe, &env, options.run_timeout).context("running")?;
    expect_success("the program", &output)?;
    let actual =
        parse_dump(&String::from_utf8_lossy(&output.stderr)).context("reading its dump")?;
    compare(expected, &actual, options.tolerance)
        .map_err(|m| anyhow!("its output differs from the reference: {m}"))
}

/// Environment variable that keeps a failed run's build directory (the programs) for inspection.
pub const KEEP_ENV: &str = "TILEDFLOW_KEEP_TEMP";

/// Keeps `dir` if [`KEEP_ENV`] is set to a non-empty value other than `0`, and says where it is;
/// otherwise lets it be deleted and says how to keep it next time.
fn keep_for_inspection(dir: tempfile::TempDir) -> String {
    let wanted = std::env::var_os(KEEP_ENV).is_some_and(|v| !v.is_empty() && v != "0");
    if wanted {
        format!("(programs kept in {})", dir.keep().display())
    } else {
        format!("(set {KEEP_ENV}=1 to keep the built programs)")
    }
}

/// The differential check with exact comparison: see [`differential_with`].
pub fn differential(kernel: &str, defines: &[(&str, &str)], variants: &[Variant]) -> Result<()> {
    differential_with(kernel, defines, variants, &DifferentialOptions::default())
}

/// Builds `polybench/kernels/<kernel>/<kernel>.c` with the reference compiler and
/// [`original_flags`], and with each variant (same flags, then the variant's arguments); runs
/// all of them and requires each variant to exit successfully and dump the same arrays as the
/// reference, under `options.tolerance`. Every variant is checked; the error lists each failing
/// one with the kernel, the defines and what went wrong. Variants with the same driver, arguments
/// and build environment (tasks on 1 and on 2 threads) are built once and run each in its own
/// environment.
pub fn differential_with(
    kernel: &str,
    defines: &[(&str, &str)],
    variants: &[Variant],
    options: &DifferentialOptions,
) -> Result<()> {
    let shown_defines = define_flags(defines)?.join(" ");
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-diff.")
        .tempdir()?;
    let expected = build_and_run_original(kernel, defines, dir.path(), options)
        .with_context(|| format!("kernel {kernel} [{shown_defines}]"))?;
    let src = kernel_source(kernel)?;
    let flags = original_flags(defines)?;
    let mut failures = Vec::new();
    // Variants that differ only in how they run (threads) share one build: the first one's.
    let mut built: Vec<(&Variant, PathBuf)> = Vec::new();
    for (idx, variant) in variants.iter().enumerate() {
        let exe = match built.iter().find(|(v, _)| v.builds_as(variant)) {
            Some((_, exe)) => exe.clone(),
            None => {
                let exe = dir.path().join(format!("variant-{idx}"));
                if let Err(e) = build_variant(&src, &flags, variant, &exe, options) {
                    failures.push(format!("variant `{}`: {e:#}", variant.name));
                    continue;
                }
                built.push((variant, exe.clone()));
                exe
            }
        };
        if let Err(e) = run_variant(variant, &exe, &expected, options) {
            failures.push(format!("variant `{}`: {e:#}", variant.name));
        }
    }
    if failures.is_empty() {
        return Ok(());
    }
    bail!(
        "kernel {kernel} [{shown_defines}]: {} of {} variant(s) failed\n{}\n{}",
        failures.len(),
        variants.len(),
        failures.join("\n"),
        keep_for_inspection(dir)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_become_flags() {
        let flags = define_flags(&[("N", "37"), ("MINI_DATASET", "")]).unwrap();
        assert_eq!(flags, ["-DN=37", "-DMINI_DATASET"]);
        assert!(define_flags(&[("N M", "1")]).is_err());
        assert!(define_flags(&[("", "1")]).is_err());
        assert!(define_flags(&[("1N", "1")]).is_err());
    }

    #[test]
    fn variant_arguments_follow_the_base_flags() {
        let v = Variant::cc("o0")
            .arg("-O0")
            .env("TILEDFLOW_NUM_THREADS", "2");
        assert_eq!(v.extra_args(), ["-O0"]);
        assert_eq!(
            v.run_env(),
            [("TILEDFLOW_NUM_THREADS".to_string(), "2".to_string())]
        );
        assert_eq!(v.driver(), Path::new("cc"));
    }
}
