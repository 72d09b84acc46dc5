#!/usr/bin/env bash
# Installs the peer compilers the PolyBench runner compares tiledflow with (`make peers`):
# clang 19 with Polly (Debian's libpolly-19-dev ships the LLVMPolly.so plugin clang loads) and
# LLVM's OpenMP runtime for Polly's parallel code. gcc's Graphite needs nothing more than gcc.
# As root it uses apt-get; otherwise it prints the exact command and fails.
set -euo pipefail
packages=(clang-19 libpolly-19-dev libomp-19-dev gcc)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "peers: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "peers: missing Debian packages: ${missing[*]}" >&2
    echo "peers: run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
echo "peers: clang-19 with Polly ($(ls /usr/lib/llvm-19/lib/LLVMPolly.so)) and gcc $(gcc -dumpversion) with Graphite are installed"
