#!/bin/sh
# Nodes a second in play, one thread, as a UAI engine reports them: `go movetime MS`
# from the start position, each engine in turn, ROUNDS rounds (alternated, so that a
# machine that gets busier or quieter moves every engine's figure alike). An engine is
# NAME=COMMAND, COMMAND run by sh; OPTIONS (name=value;...) become setoption lines.
# `--nodes N` searches `go nodes N` instead: every engine the same work, the same tree
# size (a tree's speed falls as it outgrows the caches, and a search that stops early
# at a settled move reports the speed of a smaller tree).
#
#   bench/uai-nps.sh [--movetime 3000 | --nodes 600000] [--rounds 2] \
#     'flipzero-256=target/release/flipzero uai;Model=docs/strength/fast-quick/best' \
#     'monty=$HOME/engines/monty-b2fa587/target/release/monty'
#
# Prints, per round and engine, the last `info` line's nodes and nodes/s (flipzero's
# timed search may stop before the movetime when the best move is settled: its nodes/s
# is over the time it searched).
set -eu
movetime=3000
nodes_limit=""
rounds=2
while [ $# -gt 0 ]; do
  case $1 in
    --movetime) movetime=$2; shift 2 ;;
    --nodes) nodes_limit=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --*) echo "uai-nps.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "uai-nps.sh: give at least one NAME=COMMAND[;Option=value...]" >&2; exit 2; }
if [ -n "$nodes_limit" ]; then
  go="go nodes $nodes_limit"
  # Long enough for the slowest engine measured here (200k nodes a second).
  wait_s=$(awk "BEGIN { print $nodes_limit / 200000 + 1 }")
else
  go="go movetime $movetime"
  wait_s=$(awk "BEGIN { print $movetime / 1000 + 0.7 }")
fi
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(date -u +%FT%TZ); $go"
r=1
while [ "$r" -le "$rounds" ]; do
  for spec in "$@"; do
    name=${spec%%=*}
    rest=${spec#*=}
    cmd=${rest%%;*}
    opts=""
    [ "$cmd" = "$rest" ] || opts=${rest#*;}
    line=$( (
      printf 'uai\n'
      printf '%s\n' "$opts" | tr ';' '\n' | while IFS='=' read -r k v; do
        if [ -n "$k" ]; then printf 'setoption name %s value %s\n' "$k" "$v"; fi
      done
      printf 'isready\nposition startpos\n%s\n' "$go"
      sleep "$wait_s"
      printf 'quit\n'
    ) | sh -c "$cmd" 2>/dev/null | grep '^info' | grep ' nps ' | tail -1)
    nodes=$(printf '%s' "$line" | sed -n 's/.* nodes \([0-9]*\).*/\1/p')
    nps=$(printf '%s' "$line" | sed -n 's/.* nps \([0-9]*\).*/\1/p')
    printf 'round %s  %-24s nodes %10s  nodes/s %9s\n' "$r" "$name" "${nodes:-?}" "${nps:-?}"
  done
  r=$((r + 1))
done
