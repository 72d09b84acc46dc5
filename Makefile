# tiledflow: `make demo` runs the compiler on a bundled kernel, `make test` runs all tests.
# Both install what is missing first (`make deps`).

CARGO ?= cargo
BIN_DIR := target/debug

.PHONY: all deps build demo test clean bench-runtime

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

clean:
	$(CARGO) clean
