# flipzero: the two set-up commands are `make run` and `make test`.
# Tests and binaries share the release profile so that dependencies compile once.
CARGO ?= cargo
BIN := target/release/flipzero

.PHONY: build run test lint fmt bench perft clean

# `make run` runs the default pipeline (configs/default.toml) into data/runs/default;
# running it again resumes that run (or, when finished, prints its summary).
# Another config or run directory: make run CONFIG=configs/othello.toml RUN=data/runs/o1
CONFIG ?= configs/default.toml
RUN ?= data/runs/$(basename $(notdir $(CONFIG)))

build:
	$(CARGO) build --release

run: build
	$(BIN) run --config $(CONFIG) --run $(RUN)

# The export test checks ONNX files with ONNX Runtime (Python): install its packages first.
test:
	python3 -m pip install -q -r bench/requirements.txt
	$(CARGO) test --release --workspace

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings

fmt:
	$(CARGO) fmt --all

# Speed figures (recorded in docs/benchmarks.md). Single-threaded unless stated.
bench: build
	$(BIN) bench movegen
	$(BIN) bench search
	$(BIN) bench selfplay
	$(BIN) bench net

# The reference perft of the README.
perft: build
	$(BIN) perft --depth 7

clean:
	$(CARGO) clean
