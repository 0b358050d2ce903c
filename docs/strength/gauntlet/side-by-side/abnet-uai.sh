#!/bin/sh
# The shipped fast net (docs/strength/fast-quick/fresh1024) played by alpha-beta with its
# value at the leaves (`abnet:`), on the clock, as a UAI engine for bench/gauntlet.sh
# (--engine abnet-fresh1024=THIS); $FLIPZERO, default flipzero on PATH.
here="$(cd "$(dirname "$0")" && pwd)"
exec "${FLIPZERO:-flipzero}" uai --player "abnet:$here/../../fast-quick/fresh1024" "$@"
