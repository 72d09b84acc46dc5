#!/usr/bin/env bash
# Compile time of every PolyBench kernel: the wall-clock seconds of one `tiledflow` run per kernel
# (what a user waits: the compiler runs its fusion candidates and its nests' tile code on
# threads) and its user+sys CPU seconds (which, unlike wall time, do not grow with the machine's
# load), each the best of REPEAT runs (the best of a few drops the rest of the noise).
#
#   bash scripts/compile-times.sh NEW [BASE]     (environment: SIZE=LARGE REPEAT=3 TARGET=tasks)
#
# With BASE (another tiledflow binary, e.g. one built from an earlier commit), each kernel is
# compiled by BASE and NEW in alternation, and the table has both times and their ratio, so that
# the two are measured on the same machine in the same minutes. The last lines are the sums and
# the slowest kernel. `make compile-times` runs it on the release build.
set -euo pipefail

NEW=${1:?usage: compile-times.sh NEW_TILEDFLOW [BASE_TILEDFLOW]}
BASE=${2:-}
SIZE=${SIZE:-LARGE}
REPEAT=${REPEAT:-3}
TARGET=${TARGET:-tasks}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Wall and CPU (user+sys) seconds of one compile of kernel $2 by binary $1.
cpu() {
    local TIMEFORMAT='%R %U %S' t
    t=$({ time "$1" -I "$ROOT/polybench/utilities" "-D${SIZE}_DATASET" --target "$TARGET" \
        "$ROOT/polybench/kernels/$2/$2.c" -o "$OUT/$2.c" 2>"$OUT/$2.err" >/dev/null; } 2>&1) || {
        echo "compile-times: $1 failed on $2:" >&2
        cat "$OUT/$2.err" >&2
        exit 1
    }
    awk '{printf "%.3f %.3f", $1, $2 + $3}' <<<"$t"
}

# The best of two "wall cpu" pairs, field by field ($2 empty: the first).
best() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        if (b == "") { print a; exit }
        split(a, x, " "); split(b, y, " ")
        printf "%s %s", (x[1] < y[1]) ? x[1] : y[1], (x[2] < y[2]) ? x[2] : y[2] }'
}

echo "# tiledflow compile time, wall and user+sys seconds, best of $REPEAT each, ${SIZE}_DATASET, --target $TARGET"
if [ -n "$BASE" ]; then
    printf '%-16s %8s %8s %7s %8s %8s\n' kernel base new new/base 'base cpu' 'new cpu'
else
    printf '%-16s %8s %8s\n' kernel wall cpu
fi
for dir in "$ROOT"/polybench/kernels/*/; do
    k=$(basename "$dir")
    b="" n=""
    for _ in $(seq "$REPEAT"); do
        if [ -n "$BASE" ]; then
            t=$(cpu "$BASE" "$k")
            b=$(best "$t" "$b")
        fi
        t=$(cpu "$NEW" "$k")
        n=$(best "$t" "$n")
    done
    if [ -n "$BASE" ]; then
        awk -v k="$k" -v b="$b" -v n="$n" 'BEGIN {split(b, x, " "); split(n, y, " ")
            printf "%-16s %8.2f %8.2f %7.2f %8.2f %8.2f\n", k, x[1], y[1], (x[1] > 0) ? y[1] / x[1] : 0, x[2], y[2]}'
    else
        awk -v k="$k" -v n="$n" 'BEGIN {split(n, y, " "); printf "%-16s %8.2f %8.2f\n", k, y[1], y[2]}'
    fi
done | tee "$OUT/table"
if [ -n "$BASE" ]; then
    awk '{sb += $2; sn += $3; cb += $5; cn += $6; if ($3 > mx) {mx = $3; mk = $1}}
         END {printf "%-16s %8.2f %8.2f %7.2f %8.2f %8.2f\nslowest: %s %.2f s\n", "sum", sb, sn, (sb > 0) ? sn / sb : 0, cb, cn, mk, mx}' "$OUT/table"
else
    awk '{s += $2; c += $3; if ($2 > mx) {mx = $2; mk = $1}} END {printf "%-16s %8.2f %8.2f\nslowest: %s %.2f s\n", "sum", s, c, mk, mx}' "$OUT/table"
fi
