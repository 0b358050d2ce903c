#!/bin/sh
# Two builds' nodes a second, measured in pairs: both search `go nodes NODES` from the
# start position at the same time, one on each of two cores (taskset), the cores swapped
# from pair to pair, so that a machine whose speed drifts (a VM's does by 10% within
# minutes) moves both figures of a pair alike. Prints each pair's nodes/s and the mean
# ratio B/A; a build against itself gives 1.00 ± 0.01 over four pairs.
#
#   bench/uai-pair-nps.sh [--nodes 600000] [--pairs 6] [--model DIR] BIN_A BIN_B
#
# BIN is a flipzero binary (run as `BIN uai`); the model is a fast net's folder
# (default docs/strength/fast-quick/board256). Needs two cores and nothing else running.
set -eu
nodes=600000
pairs=6
model=docs/strength/fast-quick/board256
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --*) echo "uai-pair-nps.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || { echo "uai-pair-nps.sh: give two binaries, BIN_A BIN_B" >&2; exit 2; }
a=$1
b=$2
[ -d "$model" ] || { echo "uai-pair-nps.sh: no model folder $model" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The last info line's nps of one search; the process quits once bestmove is out.
nps() {
  # The last pair's output is gone before this one's is waited on.
  rm -f "$3"
  (
    printf 'uai\nsetoption name Model value %s\nisready\nposition startpos\ngo nodes %s\n' "$2" "$nodes"
    # Wait for the search's end before quit (quit stops a search).
    while ! grep -q '^bestmove' "$3" 2>/dev/null; do sleep 0.1; done
    printf 'quit\n'
  ) | taskset -c "$4" "$1" uai > "$3" 2>&1
  grep '^info' "$3" | tail -1 | awk '{ for (i = 1; i < NF; i++) if ($i == "nps") print $(i + 1) }'
}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%FT%TZ); go nodes $nodes, $model"
r=1
while [ "$r" -le "$pairs" ]; do
  ca=$((r % 2))
  cb=$(((r + 1) % 2))
  nps "$a" "$model" "$tmp/a" "$ca" > "$tmp/a.nps" &
  nps "$b" "$model" "$tmp/b" "$cb" > "$tmp/b.nps" &
  wait
  printf 'pair %d  A %s  B %s\n' "$r" "$(cat "$tmp/a.nps")" "$(cat "$tmp/b.nps")"
  r=$((r + 1))
done | awk '{ print; if ($4 > 0) { s += $6 / $4; n++ } } END { if (n) printf "mean B/A %.4f over %d pairs\n", s / n, n }'
