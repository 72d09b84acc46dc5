//! A cache of NVRTC's CUBINs on disk, so that a program compiles its kernels once per machine,
//! not at every start (`tf_gpu_load` on a real device; NVRTC takes a good fraction of a second
//! for a kernel file).
//!
//! Where: `$XDG_CACHE_HOME/tiledflow` (an absolute `XDG_CACHE_HOME`), else
//! `$HOME/.cache/tiledflow`; [`CACHE_ENV`] (`TILEDFLOW_GPU_CACHE`) set to `off` disables it, set
//! to an absolute path uses that directory ([`dir_from`]).
//!
//! Key: everything the CUBIN depends on, as bytes ([`key`]): NVRTC's version, the architecture,
//! the program's name, the options and the source. An entry is named after a hash of the key
//! (FNV-1a, 64 bits) and holds the key itself, so that two keys with one hash are told apart (a
//! miss, never the wrong kernels); it also holds a checksum of key and CUBIN. Entry layout:
//! [`MAGIC`], then the key's and the CUBIN's lengths and the checksum (little-endian `u64`s),
//! the key, the CUBIN.
//!
//! Robustness: an entry is written to a temporary file in the cache directory and renamed into
//! place, so a reader never sees half of one (concurrent writers: the last rename wins, both
//! entries are whole). An entry that is unreadable, short, of another key or with a wrong
//! checksum is ignored and replaced by a fresh compilation. A cache that cannot be written
//! (read-only home, full disk) costs only the compilation: nothing is reported. Entries are
//! never removed (one per kernel file, architecture and NVRTC version); deleting the directory
//! empties the cache.
//!
//! Must not: decide anything about the device or the kernels; it only stores NVRTC's output.

#![forbid(unsafe_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::nvrtc::{self, NvrtcError};

/// The environment variable that disables the cache (`off`) or chooses its directory.
pub const CACHE_ENV: &str = "TILEDFLOW_GPU_CACHE";

/// The first bytes of every entry (the format's version is its last digit).
pub const MAGIC: &[u8; 8] = b"TFCUBIN1";

/// How [`compile`] got its CUBIN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// From the cache.
    Hit,
    /// Compiled by NVRTC (no entry, or one that was ignored) and stored.
    Compiled,
    /// Compiled by NVRTC without a cache (disabled, or it could not be written).
    Uncached,
}

/// The cache directory for the given environment: `TILEDFLOW_GPU_CACHE`, `XDG_CACHE_HOME` and
/// `HOME` (see the module doc); `None` when disabled or when there is no home.
pub fn dir_from(
    cache_env: Option<&OsStr>,
    xdg_cache_home: Option<&OsStr>,
    home: Option<&OsStr>,
) -> Option<PathBuf> {
    fn absolute(v: Option<&OsStr>) -> Option<&Path> {
        v.map(Path::new).filter(|p| p.is_absolute())
    }
    match cache_env {
        Some(v) if v == "off" => return None,
        Some(v) if Path::new(v).is_absolute() => return Some(PathBuf::from(v)),
        _ => {}
    }
    if let Some(xdg) = absolute(xdg_cache_home) {
        return Some(xdg.join("tiledflow"));
    }
    absolute(home).map(|h| h.join(".cache").join("tiledflow"))
}

/// [`dir_from`] this process's environment.
pub fn dir_from_env() -> Option<PathBuf> {
    let var = std::env::var_os;
    dir_from(
        var(CACHE_ENV).as_deref(),
        var("XDG_CACHE_HOME").as_deref(),
        var("HOME").as_deref(),
    )
}

/// The key of a compilation: NVRTC's `version`, `arch`, `name`, `options` and `source`, each
/// field ended by a NUL byte (none of them holds one: NVRTC takes C strings).
pub fn key(version: (i32, i32), arch: &str, name: &str, options: &[&str], source: &str) -> Vec<u8> {
    let mut k = format!("nvrtc {}.{}\0{arch}\0{name}\0", version.0, version.1).into_bytes();
    for o in options {
        k.extend_from_slice(o.as_bytes());
        k.push(0);
    }
    k.push(0);
    k.extend_from_slice(source.as_bytes());
    k
}

/// FNV-1a, 64 bits, over `parts` in turn.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    parts
        .iter()
        .flat_map(|p| p.iter())
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// The file of `key`'s entry in `dir`.
pub fn entry_path(dir: &Path, key: &[u8]) -> PathBuf {
    dir.join(format!("{:016x}.cubin", fnv1a(&[key])))
}

/// An entry's bytes.
pub fn encode(key: &[u8], cubin: &[u8]) -> Vec<u8> {
    let mut e = Vec::with_capacity(MAGIC.len() + 24 + key.len() + cubin.len());
    e.extend_from_slice(MAGIC);
    e.extend_from_slice(&(key.len() as u64).to_le_bytes());
    e.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    e.extend_from_slice(&fnv1a(&[key, cubin]).to_le_bytes());
    e.extend_from_slice(key);
    e.extend_from_slice(cubin);
    e
}

/// The CUBIN of an entry, if it is whole and of `key`.
pub fn decode(entry: &[u8], key: &[u8]) -> Option<Vec<u8>> {
    let rest = entry.strip_prefix(MAGIC.as_slice())?;
    let word = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            rest.get(8 * i..8 * i + 8)?.try_into().ok()?,
        ))
    };
    let (key_len, cubin_len, sum) = (word(0)?, word(1)?, word(2)?);
    let body = &rest[24..];
    if u64::try_from(body.len()).ok()? != key_len.checked_add(cubin_len)? {
        return None;
    }
    let (stored_key, cubin) = body.split_at(usize::try_from(key_len).ok()?);
    (stored_key == key && cubin_len > 0 && fnv1a(&[stored_key, cubin]) == sum)
        .then(|| cubin.to_vec())
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".tmp.{}.{nanos}", std::process::id()));
    let result = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// [`nvrtc::compile`] through the cache in `dir` (`None`: no cache). The CUBIN is the one NVRTC
/// gives for these arguments, from the cache when an entry of the same key is whole.
pub fn compile(
    dir: Option<&Path>,
    source: &str,
    name: &str,
    arch: &str,
    options: &[&str],
) -> Result<(Vec<u8>, Outcome), NvrtcError> {
    let Some(dir) = dir else {
        return nvrtc::compile(source, name, arch, options).map(|c| (c, Outcome::Uncached));
    };
    let key = key(nvrtc::version()?, arch, name, options, source);
    let path = entry_path(dir, &key);
    if let Some(cubin) = std::fs::read(&path).ok().and_then(|e| decode(&e, &key)) {
        return Ok((cubin, Outcome::Hit));
    }
    let cubin = nvrtc::compile(source, name, arch, options)?;
    let outcome = match write_atomically(&path, &encode(&key, &cubin)) {
        Ok(()) => Outcome::Compiled,
        Err(_) => Outcome::Uncached,
    };
    Ok((cubin, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<&OsStr> {
        Some(OsStr::new(s))
    }

    #[test]
    fn the_directory_follows_xdg_and_can_be_turned_off() {
        assert_eq!(
            dir_from(None, os("/x"), os("/h")),
            Some(PathBuf::from("/x/tiledflow"))
        );
        assert_eq!(
            dir_from(None, None, os("/h")),
            Some(PathBuf::from("/h/.cache/tiledflow"))
        );
        // A relative XDG_CACHE_HOME is ignored, as the XDG specification says.
        assert_eq!(
            dir_from(None, os("rel"), os("/h")),
            Some(PathBuf::from("/h/.cache/tiledflow"))
        );
        assert_eq!(dir_from(os("off"), os("/x"), os("/h")), None);
        assert_eq!(
            dir_from(os("/c"), os("/x"), os("/h")),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            dir_from(os("on"), None, os("/h")),
            Some(PathBuf::from("/h/.cache/tiledflow"))
        );
        assert_eq!(dir_from(None, None, None), None);
    }

    #[test]
    fn keys_differ_in_every_field() {
        let base = key((12, 9), "sm_80", "a.cu", &["--fmad=false"], "src");
        for other in [
            key((12, 8), "sm_80", "a.cu", &["--fmad=false"], "src"),
            key((12, 9), "sm_90", "a.cu", &["--fmad=false"], "src"),
            key((12, 9), "sm_80", "b.cu", &["--fmad=false"], "src"),
            key((12, 9), "sm_80", "a.cu", &[], "src"),
            key((12, 9), "sm_80", "a.cu", &["--fmad=false"], "src2"),
            // Fields cannot run into each other.
            key((12, 9), "sm_80", "a.cu", &["--fmad=false", "src"], ""),
        ] {
            assert_ne!(base, other);
        }
    }

    #[test]
    fn an_entry_is_read_back_only_whole_and_of_its_key() {
        let (k, cubin) = (b"key".as_slice(), b"\x7fELF cubin".as_slice());
        let e = encode(k, cubin);
        assert_eq!(decode(&e, k).as_deref(), Some(cubin));
        assert_eq!(decode(&e, b"other"), None);
        for cut in 0..e.len() {
            assert_eq!(decode(&e[..cut], k), None, "cut at {cut}");
        }
        let mut longer = e.clone();
        longer.push(0);
        assert_eq!(decode(&longer, k), None);
        for i in 0..e.len() {
            let mut flipped = e.clone();
            flipped[i] ^= 0x20;
            assert_eq!(decode(&flipped, k), None, "byte {i} changed");
        }
    }
}
