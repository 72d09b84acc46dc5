#!/usr/bin/env bash
# `make corpus`: real C projects built with tiledflow-cc as their C compiler, checked against the
# same projects built with cc.
#
#   bash scripts/corpus.sh TILEDFLOW_CC        (environment: PROJECTS="zlib bzip2 ...", JOBS=2,
#                                               TILEDFLOW_CORPUS_CACHE=~/.cache/tiledflow/corpus)
#
# The sources are fetched from the package registries by their ordinary clients the first time
# (cargo for the crates that bundle C libraries, pip for a Python source distribution) and kept
# in the cache; nothing of them enters the repository. Each project is built twice from fresh
# copies, by `cc` and by tiledflow-cc (its default: the tasks target, SCoPs found without
# pragmas), with the same flags; each build runs the project's own tests or a smoke run
# (scripts/corpus/*.c), and the two outputs must be identical. tiledflow-cc writes a report line
# per source (`--tiledflow-report`, through TILEDFLOW_REPORT), from which the table is made:
# per project, the C files and lines, the SCoPs found and transformed, those left as written and
# why, the sources compiled as written, and the most common reasons nests are not SCoPs.
# The exit status is 1 when a build fails or an output differs.
set -euo pipefail

TFCC=$(realpath "${1:?usage: corpus.sh TILEDFLOW_CC}")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${TILEDFLOW_CORPUS_CACHE:-$HOME/.cache/tiledflow/corpus}
PROJECTS=${PROJECTS:-zlib bzip2 lz4 zstd sqlite erfa}
JOBS=${JOBS:-2}
SMOKE=$ROOT/scripts/corpus
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The crates whose packages bundle a C library, pinned: name, version, the library's folder.
CRATES=(
    "libz-sys 1.1.31 src/zlib"
    "bzip2-sys 0.1.13+1.0.8 bzip2-1.0.8"
    "lz4-sys 1.11.1+lz4-1.10.0 liblz4"
    "zstd-sys 2.1.3+zstd.1.5.7 zstd"
    "libsqlite3-sys 0.30.1 sqlite3"
)
PYERFA=2.0.1.5

say() { echo "corpus: $*" >&2; }

# Fetches what is not in the cache yet: $CACHE/<crate>-<version>/... and $CACHE/pyerfa-<v>/.
fetch() {
    mkdir -p "$CACHE"
    local missing=() c name version
    for c in "${CRATES[@]}"; do
        read -r name version _ <<<"$c"
        [ -d "$CACHE/$name-$version" ] || missing+=("$c")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        local fetcher=$WORK/fetch
        mkdir -p "$fetcher/src"
        : >"$fetcher/src/lib.rs"
        printf '[package]\nname = "corpus-fetch"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n' >"$fetcher/Cargo.toml"
        for c in "${missing[@]}"; do
            read -r name version _ <<<"$c"
            echo "$name = \"=$version\"" >>"$fetcher/Cargo.toml"
        done
        say "fetching ${#missing[@]} crate(s) with cargo"
        cargo fetch --quiet --manifest-path "$fetcher/Cargo.toml"
        local registry=${CARGO_HOME:-$HOME/.cargo}/registry/src
        for c in "${missing[@]}"; do
            read -r name version _ <<<"$c"
            local src
            src=$(find "$registry" -mindepth 2 -maxdepth 2 -type d -name "$name-$version" | head -n 1)
            [ -n "$src" ] || { say "cargo fetched $name $version but its sources are not in $registry"; exit 1; }
            cp -r "$src" "$CACHE/$name-$version.tmp" && mv "$CACHE/$name-$version.tmp" "$CACHE/$name-$version"
        done
    fi
    if [ ! -d "$CACHE/pyerfa-$PYERFA" ]; then
        say "fetching pyerfa $PYERFA (source distribution) with pip"
        python3 -m pip download --quiet --no-deps --no-binary pyerfa "pyerfa==$PYERFA" -d "$WORK/pip"
        tar -xzf "$WORK/pip/pyerfa-$PYERFA.tar.gz" -C "$WORK/pip"
        mv "$WORK/pip/pyerfa-$PYERFA" "$CACHE/pyerfa-$PYERFA"
    fi
}

# The cached folder of crate $1's C library.
crate_dir() {
    local c name version sub
    for c in "${CRATES[@]}"; do
        read -r name version sub <<<"$c"
        [ "$name" = "$1" ] && { echo "$CACHE/$name-$version/$sub"; return; }
    done
    exit 1
}

# The sources of project $1, relative to its folder (those compiled into the library).
sources() {
    case $1 in
        zlib) (cd "$(crate_dir libz-sys)" && ls ./*.c) ;;
        bzip2) echo blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c bzip2.c bzip2recover.c ;;
        lz4) echo lib/lz4.c lib/lz4hc.c lib/lz4frame.c lib/xxhash.c lib/lz4file.c ;;
        zstd) (cd "$(crate_dir zstd-sys)" && ls lib/common/*.c lib/compress/*.c lib/decompress/*.c lib/dictBuilder/*.c) ;;
        sqlite) echo sqlite3.c ;;
        erfa) (cd "$CACHE/pyerfa-$PYERFA/liberfa/erfa/src" && ls ./*.c) ;;
    esac
}

# The folder of project $1's sources.
origin() {
    case $1 in
        zlib) crate_dir libz-sys ;;
        bzip2) crate_dir bzip2-sys ;;
        lz4) crate_dir lz4-sys ;;
        zstd) crate_dir zstd-sys ;;
        sqlite) crate_dir libsqlite3-sys ;;
        erfa) echo "$CACHE/pyerfa-$PYERFA/liberfa/erfa/src" ;;
    esac
}

# Compiles the files named on standard input in the current folder with "$@" (the compiler and
# its flags), $JOBS at once, into objects named after their paths, and archives them in lib.a.
# (The callers run under `if`, where `set -e` does not apply: every step says when it fails.)
compile_all() {
    xargs -P "$JOBS" -I{} sh -c 'f={}; o=$(echo "$f" | sed "s|^\./||; s|/|_|g; s|\.c$|.o|"); "$@" -c "$f" -o "obj/$o"' sh "$@" \
        && ar rcs lib.a obj/*.o
}

# Builds project $1 in the current folder (a fresh copy of its sources) with the C compiler $2
# and prints its check's output; fails when the build or the check fails.
build_and_check() {
    local p=$1 cc=$2
    mkdir -p obj
    case $p in
        zlib)
            ls ./*.c | compile_all "$cc" -O2 -DZ_HAVE_UNISTD_H \
                && "$cc" -O2 -I. "$SMOKE/zlib-smoke.c" lib.a -o smoke \
                && ./smoke ;;
        bzip2)
            # Its own Makefile and tests (three files compressed and three decompressed, compared
            # with the references), then the outputs' checksums.
            local flags="-O2 -D_FILE_OFFSET_BITS=64"
            make --no-print-directory CC="$cc" CFLAGS="$flags" all >build.log 2>&1 \
                && make --no-print-directory CC="$cc" CFLAGS="$flags" test >test.log 2>&1 \
                && grep -v -e "^$cc" -e "^make" test.log \
                && md5sum sample1.rb2 sample2.rb2 sample3.rb2 sample1.tst sample2.tst sample3.tst ;;
        lz4)
            sources lz4 | tr ' ' '\n' | compile_all "$cc" -O2 -Ilib \
                && "$cc" -O2 -Ilib "$SMOKE/lz4-smoke.c" lib.a -o smoke \
                && ./smoke ;;
        zstd)
            sources zstd | compile_all "$cc" -O2 -DZSTD_DISABLE_ASM -Ilib -Ilib/common \
                && "$cc" -O2 -Ilib "$SMOKE/zstd-smoke.c" lib.a -o smoke \
                && ./smoke ;;
        sqlite)
            echo sqlite3.c | compile_all "$cc" -O2 -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION \
                && "$cc" -O2 -I. "$SMOKE/sqlite-smoke.c" lib.a -lm -o smoke \
                && ./smoke ;;
        erfa)
            # Its own test program, which checks every function against known values.
            ls ./*.c | grep -v t_erfa_c.c | compile_all "$cc" -O2 -I. '-DPACKAGE_VERSION="2.0.1"' \
                -DPACKAGE_VERSION_MAJOR=2 -DPACKAGE_VERSION_MINOR=0 -DPACKAGE_VERSION_MICRO=1 \
                '-DSOFA_VERSION="20231011"' \
                && "$cc" -O2 -I. t_erfa_c.c lib.a -lm -o t_erfa \
                && ./t_erfa -v ;;
        *) say "unknown project $p"; return 1 ;;
    esac
}

fetch
failed=0
mkdir -p "$WORK/reports"
for p in $PROJECTS; do
    src=$(origin "$p")
    for side in cc tiledflow; do
        rm -rf "$WORK/$p-$side"
        cp -r "$src" "$WORK/$p-$side"
    done
    start=$(date +%s)
    if ! (cd "$WORK/$p-cc" && build_and_check "$p" cc) >"$WORK/$p.cc.out" 2>"$WORK/$p.cc.err"; then
        say "$p: the build with cc or its check failed (not tiledflow's doing):"
        tail -n 20 "$WORK/$p.cc.err" >&2
        failed=1
        continue
    fi
    report=$WORK/reports/$p.jsonl
    if ! (cd "$WORK/$p-tiledflow" && TILEDFLOW_REPORT=$report build_and_check "$p" "$TFCC") \
        >"$WORK/$p.tf.out" 2>"$WORK/$p.tf.err"; then
        say "$p: FAILED: the build with tiledflow-cc or its check failed:"
        tail -n 20 "$WORK/$p.tf.err" >&2
        failed=1
    elif ! cmp -s "$WORK/$p.cc.out" "$WORK/$p.tf.out"; then
        say "$p: FAILED: the check's output differs from the cc build's:"
        diff "$WORK/$p.cc.out" "$WORK/$p.tf.out" | head -n 20 >&2
        failed=1
    else
        say "$p: built and checked, same output as cc ($(wc -l <"$WORK/$p.cc.out") lines, $(($(date +%s) - start)) s)"
    fi
    touch "$report"
    lines=$(cd "$src" && sources "$p" | tr ' ' '\n' | xargs cat | wc -l)
    echo "$p $lines" >>"$WORK/lines"
done

python3 - "$WORK/reports" "$WORK/lines" <<'EOF'
import collections, json, os, sys

reports, lines_file = sys.argv[1], sys.argv[2]
lines = dict(l.split() for l in open(lines_file)) if os.path.exists(lines_file) else {}
rows, left, refused, untouched = [], collections.Counter(), collections.Counter(), []
totals = collections.Counter()
for project in lines:
    path = os.path.join(reports, project + ".jsonl")
    recs = [json.loads(l) for l in open(path)] if os.path.exists(path) else []
    c = collections.Counter(files=len({r["source"] for r in recs}))
    for r in recs:
        c["scops"] += r["scops"]
        c["transformed"] += r["transformed"]
        if "as_written" in r:
            c["as written"] += 1
            untouched.append(f"{project}: {r['source']}: {r['as_written']}")
        for d in r["diagnostics"]:
            if d["kind"] == "scop-left":
                left[d["reason"]] += 1
            elif d["kind"] == "not-scop":
                refused[d["reason"]] += 1
    c["left"] = c["scops"] - c["transformed"]
    totals.update(c)
    totals["lines"] += int(lines[project])
    rows.append((project, lines[project], c))
print()
print("| project | C lines | sources compiled | SCoPs found | transformed | left as written | sources compiled as written |")
print("|---|---|---|---|---|---|---|")
for project, n, c in rows:
    print(f"| {project} | {n} | {c['files']} | {c['scops']} | {c['transformed']} | {c['left']} | {c['as written']} |")
t = totals
print(f"| **all** | {t['lines']} | {t['files']} | {t['scops']} | {t['transformed']} | {t['left']} | {t['as written']} |")
print()
print("SCoPs left as written, by reason:", "none" if not left else "")
for why, n in left.most_common():
    print(f"  {n:5}  {why}")
print("Sources compiled as written:", "none" if not untouched else "")
for u in untouched:
    print(f"  {u}")
print("Loop nests that are not SCoPs, by reason (the 12 most common):")
for why, n in refused.most_common(12):
    print(f"  {n:5}  {why}")
EOF
exit $failed
