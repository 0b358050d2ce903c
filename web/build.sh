#!/bin/sh
# Builds web/dist/flipzero.wasm, the module `flipzero export --web` writes into a
# bundle: this crate for wasm32-unknown-unknown with SIMD128 (every current browser
# runs it), optimised for speed, with the build's paths remapped so that the bytes
# depend only on the sources and the toolchain (rustc's version is recorded beside it).
# Needs the target: `rustup target add wasm32-unknown-unknown`.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
registry=${CARGO_HOME:-$HOME/.cargo}
RUSTFLAGS="-C target-feature=+simd128 --remap-path-prefix=$root=/flipzero --remap-path-prefix=$registry=/cargo" \
  cargo build --locked -p web --lib --target wasm32-unknown-unknown --profile web \
  --target-dir target/wasm
cp target/wasm/wasm32-unknown-unknown/web/web.wasm web/dist/flipzero.wasm
rustc --version > web/dist/toolchain.txt
ls -l web/dist/flipzero.wasm
