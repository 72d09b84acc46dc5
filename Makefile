# tiledflow: `make demo` runs the compiler on a bundled kernel, `make test` runs all tests.
# Both install what is missing first (`make deps`).

CARGO ?= cargo
BIN_DIR := target/debug

.PHONY: all deps build demo test clean install bench-runtime compile-times peers random-programs corpus peak-flops

all: build

deps:
	@bash scripts/deps.sh

build: deps
	$(CARGO) build --workspace

demo: build
	@bash scripts/demo.sh $(BIN_DIR)

test: build
	$(CARGO) test --workspace --no-fail-fast

# streamrt against OpenMP tasks (libgomp; libomp when installed) on the same DAGs, side by side.
bench-runtime:
	$(CARGO) bench -p streamrt --bench runtime

# Compile time per PolyBench kernel (wall and user+sys, best of 3) of the release build;
# BASE=<tiledflow binary> adds that binary's times and the ratio, measured side by side. SIZE=MINI|...|LARGE.
compile-times: deps
	$(CARGO) build --release -p tiledflow
	SIZE=$(or $(SIZE),LARGE) bash scripts/compile-times.sh $(or $(CARGO_TARGET_DIR),target)/release/tiledflow $(BASE)

# One core's double-precision peak for separate multiplies and adds, measured (the README's
# fractions of peak divide by it; scripts/peak-flops.c says how).
peak-flops:
	mkdir -p target
	$(CC) -O2 -march=native scripts/peak-flops.c -o target/peak-flops
	target/peak-flops

# Random affine programs through every CPU target, compared with cc (testsuite/tests/
# random_programs.rs): `make random-programs COUNT=500 SEED=1000`. `make test` runs a fixed set.
random-programs: build
	TILEDFLOW_RANDOM_PROGRAMS=$(or $(COUNT),200) TILEDFLOW_RANDOM_SEED=$(or $(SEED),0) \
		$(CARGO) test -p testsuite --test random_programs -- --nocapture

# Real C projects (zlib, bzip2, lz4, zstd, SQLite, ERFA) built with tiledflow-cc as CC, their
# tests or smoke runs compared with the build by cc, and a table of SCoPs found, transformed and
# left as written (scripts/corpus.sh; sources fetched once into ~/.cache/tiledflow/corpus).
# PROJECTS="zlib erfa" picks some.
corpus: deps
	$(CARGO) build --release -p tiledflow -p streamrt
	bash scripts/corpus.sh $(or $(CARGO_TARGET_DIR),target)/release/tiledflow-cc

clean:
	$(CARGO) clean

# `make install PREFIX=/usr/local` installs bin/tiledflow, bin/tiledflow-cc, lib/libstreamrt.a,
# lib/libstreamrt_gpu.a (the cuda target's) and include/streamrt.h (DESTDIR is honoured). tiledflow-cc finds lib/libstreamrt.a from bin/ by
# itself. INSTALL_PROFILE=dev installs the debug build instead of building a release.
PREFIX ?= /usr/local
INSTALL_PROFILE ?= release
INSTALL_FROM = $(or $(CARGO_TARGET_DIR),target)/$(if $(filter dev,$(INSTALL_PROFILE)),debug,$(INSTALL_PROFILE))

install: deps
	$(CARGO) build --workspace --profile $(INSTALL_PROFILE)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 755 $(INSTALL_FROM)/tiledflow $(INSTALL_FROM)/tiledflow-cc $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(INSTALL_FROM)/libstreamrt.a $(INSTALL_FROM)/libstreamrt_gpu.a $(DESTDIR)$(PREFIX)/lib/
	install -m 644 streamrt/include/streamrt.h $(DESTDIR)$(PREFIX)/include/

# Peer compilers for the PolyBench runner's `polly` and `graphite` targets (apt-get, as root).
peers:
	@bash scripts/peers.sh
