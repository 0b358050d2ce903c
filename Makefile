# flipzero: the two set-up commands are `make run` and `make test`.
# `make run` builds the release profile (fat LTO); `make test` the `tests` profile
# (optimised, no LTO, parallel codegen: see Cargo.toml), so a cold test build stays short.
CARGO ?= cargo
BIN := target/release/flipzero
# The Python that creates the project's virtual environment (.venv/) for the export
# check. Any Python 3 with the venv module: on Debian/Ubuntu, `apt install python3-venv`.
# The system Python itself is never written to (it may refuse pip, PEP 668).
PYTHON ?= python3
VENV := .venv
# Cargo features of the test build (`make test FEATURES=wgpu`): CI builds once with the
# wgpu backend, so that `make test` runs the wgpu test too and no second build of the
# workspace with other features is needed (about 19 CPU-minutes).
FEATURES ?=
FEATURE_FLAGS := $(if $(FEATURES),--features '$(FEATURES)')

.PHONY: build build-gpu run test python-test test-wgpu venv browser lint fmt bench perft clean architecture web

# `make run` runs the ten-minute preset (configs/quick.toml: fast nets) into
# data/runs/quick; running it again resumes that run (or, when finished, prints its
# summary). Another config or run directory: make run CONFIG=configs/othello.toml
# RUN=data/runs/o1 (configs/default.toml: the 9-minute loop of the residual CNN)
CONFIG ?= configs/quick.toml
RUN ?= data/runs/$(basename $(notdir $(CONFIG)))

build:
	$(CARGO) build --release

# The GPU build: Burn's wgpu backend (Vulkan on NVIDIA/AMD under Linux, Metal, DX12),
# from the package registries alone (no download at build time). Its binary trains with
# train.device = "wgpu" and runs self-play nets with selfplay.device = "wgpu"; it needs a
# Vulkan loader (libvulkan1) and the GPU's driver where it runs.
build-gpu:
	$(CARGO) build --release --features wgpu

run: build
	$(BIN) run --config $(CONFIG) --run $(RUN)

# The export test checks ONNX files with ONNX Runtime (Python), from the project's venv.
$(VENV)/.installed: bench/requirements.txt python/requirements-test.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check -r bench/requirements.txt -r python/requirements-test.txt
	touch $@

venv: $(VENV)/.installed

# The browser tests drive Debian's chromium over WebDriver (chromedriver); installed
# with apt when missing (as root; CI runs as root).
browser:
	.ci/install-browser

test: $(VENV)/.installed browser
	.ci/check-architecture
	$(if $(filter wgpu,$(FEATURES)),.ci/install-vulkan)
	FLIPZERO_PYTHON=$(abspath $(VENV))/bin/python $(CARGO) test --profile tests --workspace $(FEATURE_FLAGS)
	$(MAKE) python-test

# The Python package (python/): the extension module from the tests build, packed into
# a wheel (python/build-wheel.py, no second build), installed into .venv/, and its tests.
# `--workspace --all-targets` resolves features as `cargo test --workspace` does, so after
# `make test`'s test build only the extension module is compiled (`-p flipzero-python`
# would rebuild most dependencies with its own features: minutes on 2 cores).
python-test: $(VENV)/.installed
	$(CARGO) build --profile tests --workspace --all-targets $(FEATURE_FLAGS)
	$(VENV)/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
		"$$($(VENV)/bin/python python/build-wheel.py target/tests/lib_flipzero.so target/wheels)"
	FLIPZERO_BIN=$(abspath target/tests/flipzero) $(VENV)/bin/python -m pytest -q -p no:cacheprovider python/tests

# Burn's wgpu backend against the CPU engines (training losses, the fast path's outputs,
# self-play through selfplay.device = "wgpu"), on Mesa's software Vulkan driver (lavapipe)
# where there is no GPU; installed with apt when missing (as root). A second build of the
# workspace, with --features wgpu: about 19 CPU-minutes cold (CI instead runs
# `make test FEATURES=wgpu`, one build for both).
test-wgpu:
	.ci/install-vulkan
	$(CARGO) test --profile tests --workspace --features wgpu --test it wgpu

# The serverless player's WebAssembly module (web/dist/flipzero.wasm, committed; see
# docs/web.md). Needs `rustup target add wasm32-unknown-unknown`.
web:
	web/build.sh

# The invariants of ARCHITECTURE.md that a command can check (also part of `make test`).
architecture:
	.ci/check-architecture

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --profile tests -- -D warnings

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
	rm -rf $(VENV)
