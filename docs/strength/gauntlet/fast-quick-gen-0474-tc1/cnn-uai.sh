#!/bin/sh
# The CNN 2-hour best as a UAI engine for bench/gauntlet.sh (--engine cnn-gen-0131=THIS):
# $FLIPZERO (default: flipzero on PATH) with docs/strength/gen-0131.
here="$(cd "$(dirname "$0")" && pwd)"
exec "${FLIPZERO:-flipzero}" uai --model "$here/../../gen-0131" "$@"
