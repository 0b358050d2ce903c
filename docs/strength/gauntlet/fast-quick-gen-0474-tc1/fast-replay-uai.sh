#!/bin/sh
# The second fast-net 2-hour run's best (gen-0084) as a UAI engine for bench/gauntlet.sh
# (--engine fast-replay-gen-0084=THIS): $FLIPZERO (default: flipzero on PATH) with
# docs/strength/fast-replay/best.
here="$(cd "$(dirname "$0")" && pwd)"
exec "${FLIPZERO:-flipzero}" uai --model "$here/../../fast-replay/best" "$@"
