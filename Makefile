# tiledflow: `make demo` runs the compiler on a bundled kernel, `make test` runs all tests.
# Both install what is missing first (`make deps`).

CARGO ?= cargo
BIN_DIR := target/debug

.PHONY: all deps build demo test clean peers

all: build

deps:
	@bash scripts/deps.sh

build: deps
	$(CARGO) build --workspace

demo: build
	@bash scripts/demo.sh $(BIN_DIR)

test: build
	$(CARGO) test --workspace --no-fail-fast

clean:
	$(CARGO) clean

# Peer compilers for the PolyBench runner's `polly` and `graphite` targets (apt-get, as root).
peers:
	@bash scripts/peers.sh
