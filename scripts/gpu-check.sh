#!/usr/bin/env bash
# The cuda target on a real GPU, for a machine that has one but neither libclang nor Rust: the
# programs are built here and run there.
#
#   bash scripts/gpu-check.sh build DIR        here: DIR/gpu-check.tar.xz (stripped programs)
#   bash scripts/gpu-check.sh run DIR OUT      on the GPU machine: OUT/gpu-check.tsv and logs
#
# build: every PolyBench kernel at $SIZES (default MEDIUM), and the kernels of $TIMED (a
# comma-separated list, default none) at LARGE too, each as the original (`cc`) and as the cuda
# target (`tiledflow-cc --tiledflow-target=cuda`), with the runner's flags but a portable
# `-march=x86-64-v3` instead of `-march=native` (the GPU machine's processor is another).
# run: each pair once with its dump (TILEDFLOW_GPU=cuda, TILEDFLOW_NUM_THREADS=$THREADS, default
# the machine's cores), then the cuda program again without its dump (its kernels now come from
# NVRTC's cache); a row per program: verified (dumps equal, text that round-trips: bit equality)
# or WRONG or failed, where its SCoPs ran (`GPU`, `CPU by compiler`, or `CPU fallback: <notice>`)
# and the three kernel times. NVRTC: `libnvrtc.so.12` from the system, else the xz-compressed
# `libnvrtc*.xz` of the directory $NVRTC_XZ (carried along: such machines cannot reach PyPI),
# else a `libnvrtc.so.13` under the name streamrt looks for.
#
# As run on a lent GPU machine (the device tool; the repository is copied there):
#   here:  TIMED=gemm,2mm bash scripts/gpu-check.sh build gpu-check   (gpu-check/ git-ignored)
#          xz -c <nvrtc dir>/libnvrtc.so.12 >gpu-check/libnvrtc.so.12.xz   (and the builtins)
#   there: NVRTC_XZ=gpu-check bash scripts/gpu-check.sh run gpu-check "$OUT"
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODE=${1:?usage: gpu-check.sh build DIR | run DIR OUT}
DIR=${2:?usage: gpu-check.sh build DIR | run DIR OUT}

build() {
    local bin="$ROOT/target/release" work="$DIR/programs" sizes=${SIZES:-MEDIUM} timed=${TIMED:-}
    local utils="$ROOT/polybench/utilities" flags=(-O3 -march=x86-64-v3 -ffp-contract=off)
    rm -rf "$work" && mkdir -p "$work"
    local kernels size k
    kernels=$(cd "$ROOT/polybench/kernels" && ls -d */ | tr -d /)
    for size in $sizes LARGE; do
        for k in $kernels; do
            if [ "$size" = LARGE ] && [[ ",$timed," != *",$k,"* ]]; then continue; fi
            local d=(-I "$utils" "-D${size}_DATASET" -DPOLYBENCH_DUMP_ARRAYS -DPOLYBENCH_TIME)
            local src="$ROOT/polybench/kernels/$k/$k.c" stem="$work/$size.$k"
            cc "${flags[@]}" "${d[@]}" "$src" -o "$stem.orig" -lm || { echo "gpu-check: $k: cc failed" >&2; exit 1; }
            "$bin/tiledflow-cc" --tiledflow-strict --tiledflow-target=cuda --tiledflow-verbose \
                "${flags[@]}" "${d[@]}" "$src" -o "$stem.cuda" 2>"$stem.notes" \
                || { cat "$stem.notes" >&2; echo "gpu-check: $k: tiledflow-cc failed" >&2; exit 1; }
            strip "$stem.orig" "$stem.cuda"
            # The runner's reading of the notes: SCoPs transformed, and those kept on the CPU.
            printf '%s/%s SCoPs kept on the CPU by the compiler\n' \
                "$(grep -c 'SCoP stays on the CPU (--target cuda)' "$stem.notes")" \
                "$(grep -c ': SCoP in ' "$stem.notes")" >"$stem.kept"
            rm "$stem.notes"
        done
    done
    tar -C "$DIR" -cJf "$DIR/gpu-check.tar.xz" programs && rm -rf "$work"
    ls -la "$DIR/gpu-check.tar.xz"
}

# The directory holding a usable libnvrtc.so.12 (see the header), or nothing.
nvrtc_dir() {
    local found
    found=$(ldconfig -p 2>/dev/null | awk '/libnvrtc\.so\.12 /{print $NF; exit}')
    [ -z "$found" ] && found=$(find / -xdev -name 'libnvrtc.so.12*' ! -name '*builtins*' ! -name '*alt*' ! -name '*.xz' 2>/dev/null | head -1)
    if [ -n "$found" ]; then dirname "$found"; return; fi
    local alias=/tmp/gpu-check-nvrtc f
    mkdir -p "$alias"
    if [ -n "${NVRTC_XZ:-}" ] && [ -f "$NVRTC_XZ/libnvrtc.so.12.xz" ]; then
        for f in "$NVRTC_XZ"/libnvrtc*.xz; do xz -dc "$f" >"$alias/$(basename "$f" .xz)"; done
        echo "$alias"
        return
    fi
    found=$(find / -xdev -name 'libnvrtc.so.13*' ! -name '*builtins*' ! -name '*alt*' ! -name '*.xz' 2>/dev/null | head -1)
    if [ -n "$found" ]; then
        ln -sf "$found" "$alias/libnvrtc.so.12"
        echo "$alias"
    fi
}

# The dumped arrays of a run's stderr.
dump() { sed -n '/==BEGIN DUMP_ARRAYS==/,/==END   DUMP_ARRAYS==/p' "$1"; }
# The kernel's time: the last line of stdout that is a number.
seconds() { grep -E '^[0-9.]+(e[-+]?[0-9]+)?$' "$1" | tail -1; }

run() {
    local out=${3:?usage: gpu-check.sh run DIR OUT} threads=${THREADS:-$(nproc)} lib
    mkdir -p "$out"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/machine.txt" 2>&1
    { grep -m1 'model name' /proc/cpuinfo; nproc; } >>"$out/machine.txt"
    lib=$(nvrtc_dir)
    echo "nvrtc: ${lib:-none found}" >>"$out/machine.txt"
    [ -n "$lib" ] && export TILEDFLOW_NVRTC_LIB="$lib"
    local work=/tmp/gpu-check-run
    rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$DIR/gpu-check.tar.xz"
    printf 'kernel\tsize\tresult\tran on\tcompiler\toriginal s\tcuda s\tcuda s, cached kernels\n' >"$out/gpu-check.tsv"
    local exe name status where
    for exe in "$work"/programs/*.cuda; do
        name=$(basename "$exe" .cuda)
        timeout 300 "${exe%.cuda}.orig" >"$work/$name.orig.out" 2>"$work/$name.orig.err"
        TILEDFLOW_GPU=cuda TILEDFLOW_NUM_THREADS=$threads timeout 300 "$exe" \
            >"$work/$name.cuda.out" 2>"$work/$name.cuda.err"
        local rc=$?
        # Again without the dump: the kernels now come from NVRTC's cache (not compiled again).
        POLYBENCH_NO_DUMP=1 TILEDFLOW_GPU=cuda TILEDFLOW_NUM_THREADS=$threads timeout 300 "$exe" \
            >"$work/$name.again.out" 2>/dev/null
        if [ $rc -ne 0 ]; then
            status="failed (exit $rc)"
            tail -5 "$work/$name.cuda.err" >"$out/$name.failed.txt"
        elif cmp -s <(dump "$work/$name.orig.err") <(dump "$work/$name.cuda.err") \
            && [ -n "$(dump "$work/$name.orig.err")" ]; then
            status=verified
        else
            status=WRONG
            diff <(dump "$work/$name.orig.err") <(dump "$work/$name.cuda.err") | head -20 >"$out/$name.wrong.txt"
        fi
        where=$(grep -m1 'running the CPU task version' "$work/$name.cuda.err" || true)
        where=${where:+CPU fallback: $where}
        if grep -qE "^([0-9]+)/\1 " "${exe%.cuda}.kept"; then where="CPU by compiler"; fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${name#*.}" "${name%%.*}" "$status" "${where:-GPU}" \
            "$(cat "${exe%.cuda}.kept")" \
            "$(seconds "$work/$name.orig.out")" "$(seconds "$work/$name.cuda.out")" \
            "$(seconds "$work/$name.again.out")" >>"$out/gpu-check.tsv"
    done
    cat "$out/machine.txt" "$out/gpu-check.tsv"
}

case "$MODE" in
    build) build ;;
    run) run "$@" ;;
    *) echo "gpu-check: unknown mode $MODE (build or run)" >&2; exit 2 ;;
esac
