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
