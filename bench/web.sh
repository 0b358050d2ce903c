#!/bin/sh
# The serverless player's speed: the same search natively (`flipzero bench web`, at the
# CPU's best instruction-set level and at the portable one) and in WebAssembly under
# Node, with SIMD128 (the module that `export --web` ships) and without it (built here
# for the comparison). Their evaluation counts must agree: the same moves everywhere.
# Usage: bench/web.sh [NET_DIR] (default: the second fast run's best). Needs node,
# a release build (`cargo build --release`) and the wasm32-unknown-unknown target.
set -eu
cd "$(dirname "$0")/.."
net=${1:-docs/strength/fast-replay/best}
lscpu | grep -m1 "Model name" || true
target/release/flipzero bench web --model "$net"
FLIPZERO_ISA=portable target/release/flipzero bench web --model "$net"
node bench/web-player.js web/dist/flipzero.wasm "$net"
root=$(pwd)
registry=${CARGO_HOME:-$HOME/.cargo}
RUSTFLAGS="--remap-path-prefix=$root=/flipzero --remap-path-prefix=$registry=/cargo" \
  cargo build --locked -q -p web --lib --target wasm32-unknown-unknown --profile web \
  --target-dir target/wasm-scalar
node bench/web-player.js target/wasm-scalar/wasm32-unknown-unknown/web/web.wasm "$net"
