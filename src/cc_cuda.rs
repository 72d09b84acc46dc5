//! `tiledflow-cc --tiledflow-target=cuda`: the emulated kernels. The host program (`out.c`) is
//! compiled like every other target's; this module builds each transformed source's kernel file
//! (`out.cu`) as the emulated kernels, so that `TILEDFLOW_GPU=emulate ./prog` runs the GPU path of
//! a project built with tiledflow-cc (without them the program finds no emulated kernels and runs
//! its CPU task version). With a real device the kernels embedded in `out.c` are compiled by
//! NVRTC at run time; the emulated ones are not used.
//!
//! The emulated build of a kernel file (as in `emit_cuda`'s doc): the C++ compiler
//! (`TILEDFLOW_CXX`, a command line like `TILEDFLOW_CC`; else the first of [`DEFAULT_CXX`] that
//! runs) with `-x c++ -DTF_CUDA_EMULATE -include tf_cuda_emu.h` ([`taskgen::emit_cuda::EMU_H`],
//! written beside it), the user's optimization and code generation flags
//! ([`emulation_flags`]), `-ffp-contract=off` (the device is asked for `--fmad=false`),
//! `-fPIC` (the object may go into a shared library) and `-fno-exceptions -fno-rtti` (the
//! object then needs nothing of libstdc++; `-lstdc++` is linked anyway, see below).
//!
//! Where the object goes:
//! - a command that links (`tiledflow-cc a.c b.c -o prog`): the objects are added to the link,
//!   before streamrt;
//! - `-c` (`make`, CMake: one object per source): after the compiler wrote `a.o`, the emulated
//!   object is merged into it by a partial link ([`merge_command`]: `cc -r`), so the object
//!   make or CMake asked for holds both and no companion file has to follow it into archives
//!   or the final link. The emulated symbols of each file carry a tag of their own (see
//!   `emit_cuda`), so the objects of several sources link together;
//! - `-S` (assembly): not possible; the program built from it runs the CPU task version when
//!   asked for the emulated device (its notice says so).
//!
//! A link of the cuda target also gets `-lstdc++` when a C++ compiler was found. Without a C++
//! compiler, or when it fails on a kernel file, tiledflow-cc warns (fails under
//! `--tiledflow-strict`) and the program keeps its CPU fallback.
//!
//! This module only builds command lines and runs the C++ compiler and the partial link; the
//! binary decides when.

use crate::cc::{CcCommand, PARSER_TAKES_VALUE};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable naming the C++ compiler (words separated by spaces).
pub const CXX_ENV: &str = "TILEDFLOW_CXX";

/// The C++ compilers tried, in order, when [`CXX_ENV`] is not set.
pub const DEFAULT_CXX: &[&str] = &["c++", "g++", "clang++"];

/// Flags of every emulated build besides the user's (see the module doc).
pub const EMULATION_FLAGS: &[&str] = &[
    "-x",
    "c++",
    "-DTF_CUDA_EMULATE",
    "-ffp-contract=off",
    "-fPIC",
    "-fno-exceptions",
    "-fno-rtti",
    "-w",
];

/// Whether a kernel file has kernels (a file whose SCoPs all stay on the CPU has none).
pub fn has_kernels(cu: &str) -> bool {
    cu.contains("extern \"C\" __global__")
}

/// The C++ compiler as a command line: [`CXX_ENV`] if set (not checked here: its failure is
/// reported when it runs), else the first of [`DEFAULT_CXX`] that answers `--version`. The
/// error says what was tried.
pub fn find_cxx() -> Result<Vec<String>, String> {
    if let Some(line) = std::env::var(CXX_ENV).ok().filter(|c| !c.trim().is_empty()) {
        return Ok(line.split_whitespace().map(String::from).collect());
    }
    DEFAULT_CXX
        .iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(|c| vec![c.to_string()])
        .ok_or_else(|| {
            format!(
                "no C++ compiler to build the emulated kernels (tried {}; set {CXX_ENV})",
                DEFAULT_CXX.join(", ")
            )
        })
}

/// The user's flags that the emulated build takes too: optimization (`-O…`), debug (`-g…`),
/// machine (`-m…`) and code generation (`-f…`) flags, except `-ffp-contract=` (the emulated
/// build always has `off`) and `-flto…` (a partial link of LTO objects is not what the
/// linker expects). Values of other options are skipped (`-o -fx` names a file).
pub fn emulation_flags(cmd: &CcCommand) -> Vec<String> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < cmd.args.len() {
        let a = cmd.args[k].as_str();
        k += 1;
        if PARSER_TAKES_VALUE.contains(&a) || crate::cc::OTHER_TAKES_VALUE.contains(&a) {
            k += 1;
            continue;
        }
        let keep = ["-O", "-g", "-m", "-f"].iter().any(|p| a.starts_with(p))
            && !a.starts_with("-ffp-contract")
            && !a.starts_with("-flto");
        if keep {
            out.push(a.to_string());
        }
    }
    out
}

/// Builds the emulated kernels of one source: writes `cu` as `dir/<stem>.cu` (and the emulation
/// header beside it) and compiles it into `dir/<stem>.emu.o`, which is returned. The error
/// quotes the compiler.
pub fn compile_emulation(
    cxx: &[String],
    flags: &[String],
    cu: &str,
    stem: &str,
    dir: &Path,
) -> Result<PathBuf, String> {
    let header = dir.join("tf_cuda_emu.h");
    if !header.exists() {
        std::fs::write(&header, taskgen::emit_cuda::EMU_H)
            .map_err(|e| format!("{}: {e}", header.display()))?;
    }
    let src = dir.join(format!("{stem}.cu"));
    std::fs::write(&src, cu).map_err(|e| format!("{}: {e}", src.display()))?;
    let obj = dir.join(format!("{stem}.emu.o"));
    let (program, rest) = cxx.split_first().ok_or("an empty C++ compiler command")?;
    let output = Command::new(program)
        .args(rest)
        .args(EMULATION_FLAGS)
        .args(flags)
        .arg("-include")
        .arg(&header)
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .map_err(|e| format!("cannot run the C++ compiler `{program}`: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let quoted: Vec<&str> = stderr.lines().take(10).collect();
        return Err(format!(
            "`{program}` failed on the kernel file ({}):\n{}",
            output.status,
            quoted.join("\n")
        ));
    }
    Ok(obj)
}

/// The object `cc -c` writes for the source `user` (as the user named it): `-o` when given,
/// else the source's file name with `.o`, in the working directory. `None` for `-S` (assembly:
/// nothing to merge into) and for standard input without `-o`.
pub fn object_of(cmd: &CcCommand, user: &str) -> Option<PathBuf> {
    if cmd.args.iter().any(|a| a == "-S") {
        return None;
    }
    if let Some(o) = &cmd.output {
        return Some(PathBuf::from(o));
    }
    if user == "-" {
        return None;
    }
    Path::new(user)
        .file_name()
        .map(|n| Path::new(n).with_extension("o"))
}

/// The partial link that merges `extra` into the object `obj`: `<cc> -r -nostdlib obj extra -o
/// tmp`, `tmp` beside `obj` (renamed over it afterwards). Returns the command's words and `tmp`.
pub fn merge_command(cc: &[String], obj: &Path, extra: &Path) -> (Vec<String>, PathBuf) {
    let mut name = obj.file_name().unwrap_or_default().to_os_string();
    name.push(".tiledflow-merge.o");
    let tmp = obj.with_file_name(name);
    let mut words = cc.to_vec();
    words.extend(["-r".to_string(), "-nostdlib".to_string()]);
    words.extend([obj, extra].map(|p| p.display().to_string()));
    words.extend(["-o".to_string(), tmp.display().to_string()]);
    (words, tmp)
}

/// Merges `extra` into `obj` with [`merge_command`]; `obj` is replaced only when that succeeded.
pub fn merge_into(cc: &[String], obj: &Path, extra: &Path) -> Result<(), String> {
    let (words, tmp) = merge_command(cc, obj, extra);
    let output = Command::new(&words[0])
        .args(&words[1..])
        .output()
        .map_err(|e| format!("cannot run `{}` for the partial link: {e}", words[0]))?;
    if !output.status.success() {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!(
            "the partial link `{}` failed ({}):\n{}",
            words.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim_end()
        ));
    }
    std::fs::rename(&tmp, obj).map_err(|e| format!("{}: {e}", obj.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::parse;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_emulated_build_takes_code_generation_flags_only() {
        let c = parse(&v(
            "-c -O2 -g -march=native -fPIC -ffp-contract=fast -flto -Wall -std=c99 -I inc -DN=4 -o -fx.o -MF -fdep.d a.c",
        ))
        .unwrap();
        assert_eq!(emulation_flags(&c), v("-O2 -g -march=native -fPIC"));
    }

    #[test]
    fn objects_are_named_as_cc_names_them() {
        let c = parse(&v("-c src/a.c -o build/a.c.o")).unwrap();
        assert_eq!(object_of(&c, "src/a.c"), Some(PathBuf::from("build/a.c.o")));
        let c = parse(&v("-c src/a.c src/b.c")).unwrap();
        assert_eq!(object_of(&c, "src/b.c"), Some(PathBuf::from("b.o")));
        let c = parse(&v("-S src/a.c")).unwrap();
        assert_eq!(object_of(&c, "src/a.c"), None);
        let c = parse(&v("-x c -c -")).unwrap();
        assert_eq!(object_of(&c, "-"), None);
    }

    #[test]
    fn the_partial_link_writes_beside_the_object() {
        let (words, tmp) =
            merge_command(&v("gcc -m64"), Path::new("o/a.o"), Path::new("/t/a.emu.o"));
        assert_eq!(
            words,
            v("gcc -m64 -r -nostdlib o/a.o /t/a.emu.o -o o/a.o.tiledflow-merge.o")
        );
        assert_eq!(tmp, PathBuf::from("o/a.o.tiledflow-merge.o"));
    }

    #[test]
    fn only_files_with_kernels_are_built() {
        assert!(has_kernels(
            "extern \"C\" __global__ void tf_scop0_n0_k0(long tf_k0)\n{\n}\n"
        ));
        assert!(!has_kernels(
            "/* tiledflow: CUDA kernels of a.c (0 kernels). */\n"
        ));
    }
}
