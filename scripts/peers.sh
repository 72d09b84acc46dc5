#!/usr/bin/env bash
# Installs the peer compilers the PolyBench runner compares tiledflow with (`make peers`):
# clang 19 with Polly (Debian's clang-19 has Polly built in: `-mllvm -polly`; libpolly-19-dev
# is its library package) and LLVM's OpenMP runtime for Polly's parallel code and clang's
# -fopenmp. gcc's Graphite needs nothing more than gcc. As root it uses apt-get; otherwise it
# prints the exact command and fails (scripts/deps.sh does the installing).
set -euo pipefail
bash "$(dirname "$0")/deps.sh" clang-19 libpolly-19-dev libomp-19-dev gcc
echo "peers: clang-19 with Polly and gcc $(gcc -dumpversion) with Graphite are installed"
