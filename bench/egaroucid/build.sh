#!/usr/bin/env bash
# Builds bench/egaroucid/nboard.cpp (an NBoard front end) against Egaroucid's web engine.
#   bench/egaroucid/build.sh EGAROUCID_CHECKOUT OUT_PROGRAM
# EGAROUCID_CHECKOUT is a clone of https://github.com/Nyanyan/Egaroucid (GPL-3.0; not
# vendored here); its commit is printed, to be recorded beside every result.
set -euo pipefail
src="${1:?usage: $0 EGAROUCID_CHECKOUT OUT_PROGRAM}"
out="${2:?usage: $0 EGAROUCID_CHECKOUT OUT_PROGRAM}"
[ -f "$src/src/web/ai.hpp" ] || { echo "$src: no src/web/ai.hpp (not an Egaroucid checkout?)" >&2; exit 1; }
here="$(cd "$(dirname "$0")" && pwd)"
"${CXX:-g++}" -O2 -std=c++20 -march=native -pthread -w -I "$src/src" "$here/nboard.cpp" -o "$out"
echo "built $out from Egaroucid $(git -C "$src" rev-parse HEAD 2>/dev/null || echo '(commit unknown: not a git checkout)')"
