#!/bin/sh
# The CNN 2-hour best (docs/strength/gen-0131), MCTS on the clock, as a UAI engine for
# bench/gauntlet.sh (--engine cnn-gen-0131=THIS); $FLIPZERO, default flipzero on PATH.
here="$(cd "$(dirname "$0")" && pwd)"
exec "${FLIPZERO:-flipzero}" uai --model "$here/../../gen-0131" "$@"
