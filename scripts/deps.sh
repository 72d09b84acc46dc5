#!/usr/bin/env bash
# Installs what the build needs on Debian: libclang 19 (the frontend), autotools (isl-rs builds
# ISL from source), a C compiler (generated programs, the ISL build), cmake (the test that builds a
# CMake project with tiledflow-cc). As root it uses apt-get; otherwise it prints the exact command
# and fails. With arguments, it installs those packages instead.
set -euo pipefail
packages=(libclang-19-dev autoconf automake libtool make gcc libc6-dev cmake)
# Other scripts pass their own list (scripts/peers.sh).
if [ $# -gt 0 ]; then packages=("$@"); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "deps: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "deps: missing Debian packages: ${missing[*]}" >&2
    echo "deps: run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "deps: cargo is missing: install a Rust toolchain (1.80 or newer), e.g. with rustup" >&2
  exit 1
fi
# NVRTC, CUDA's run-time compiler, from PyPI (no GPU, no CUDA toolkit needed): the cuda target's
# tests compile kernels with it, and generated programs use it on a machine with a GPU. Pinned to
# the CUDA 12.9 that streamrt's bindings are for. Installed for the user (into a virtualenv when
# one is active); streamrt-gpu finds it by asking python3 (see streamrt-gpu/src/nvrtc.rs).
if [ $# -eq 0 ]; then
  nvrtc_pkg=nvidia-cuda-nvrtc-cu12
  nvrtc_version=12.9.86
  installed=$(python3 -c "import importlib.metadata as m; print(m.version('$nvrtc_pkg'))" 2>/dev/null || true)
  if [ "$installed" != "$nvrtc_version" ]; then
    user=--user
    if python3 -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' 2>/dev/null; then user=; fi
    cmd="python3 -m pip install $user $nvrtc_pkg==$nvrtc_version"
    echo "deps: installing NVRTC: $cmd"
    if ! $cmd >/dev/null; then
      echo "deps: could not install NVRTC from PyPI; run: $cmd" >&2
      echo "deps: (python3 and pip are needed: sudo apt-get install -y python3-pip)" >&2
      exit 1
    fi
  fi
fi
