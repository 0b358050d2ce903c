#!/bin/bash
# Kernel dispatches per training step of Burn's wgpu engine, counted on any Vulkan
# device (Mesa's software one, lavapipe, will do: `.ci/install-vulkan`): two runs of N
# and 2N steps with CubeCL's profiling logger at level "minimal" (one line for every
# kernel that runs), the difference divided by N, so that the one-time work (shader
# compilation, autotuning, the first upload) cancels out. Also the kernels by name.
#
#   bench/gpu-dispatches.sh BIN DATA [NET] [BATCH] [N] [EXTRA --set ...]
#   bench/gpu-dispatches.sh target/gpu/tests/flipzero data/runs/quick/selfplay/gen-0001 tiny 64 3
#
# BIN: a build with --features wgpu (make build-gpu). DATA: one folder of shards.
#
#   bench/gpu-dispatches.sh --infer BIN MODEL
#
# counts the kernels of an inference batch instead: GPU self-play (net_engine = "burn")
# of one game at one simulation a move (one evaluation of one position a move, the
# tree's root), to 4 and to 12 plies, after a first run that fills CubeCL's autotune
# cache; the difference over 8.
set -eu
if [ "${1:-}" = "--infer" ]; then
  BIN=$(realpath "$2"); MODEL=$(realpath "$3")
  W=$(mktemp -d)
  trap 'rm -rf "$W"' EXIT
  printf '[profiling.logger]\nlevel = "minimal"\nfile = "%s/kernels.log"\n' "$W" > "$W/cubecl.toml"
  plies() {
    rm -rf "$W/out" "$W/kernels.log"
    (cd "$W" && XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$W} "$BIN" selfplay --game ataxx --model "$MODEL" \
      --out "$W/out" --games 1 --threads 1 --seed 1 --quiet --set net_engine=burn --set device=wgpu \
      --set simulations=1 --set fast_simulations=1 --set full_search_fraction=1 --set max_plies="$1" \
      --set games_per_thread=1 --set games_per_worker_batch=1 --set opening_random_plies=0 \
      --set resign_threshold=-1 --set tree_reuse=false > "$W/sp.log" 2>&1) || { cat "$W/sp.log" >&2; exit 1; }
    wc -l < "$W/kernels.log"
  }
  plies 4 > /dev/null
  a=$(plies 4); b=$(plies 12)
  echo "inference: $a kernels in 4 moves, $b in 12: $(( (b - a) / 8 )) a batch of one position"
  exit 0
fi
BIN=$(realpath "$1"); DATA=$(realpath "$2"); NET=${3:-tiny}; BATCH=${4:-64}; N=${5:-3}
shift $(( $# < 5 ? $# : 5 ))
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat > "$W/cubecl.toml" <<T
[profiling.logger]
level = "minimal"
file = "$W/kernels.log"
T
count() { # steps, then extra train arguments
  steps=$1; shift
  rm -rf "$W/out" "$W/kernels.log"
  (cd "$W" && XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$W} "$BIN" train --data "$DATA" --out "$W/out" --quiet \
    --set device=wgpu --set steps="$steps" --set batch_size="$BATCH" --set net="$NET" \
    --set checkpoint_every=100000 "$@" > "$W/train.log" 2>&1) || { cat "$W/train.log" >&2; exit 1; }
  sed 's/_[0-9a-f]\{8\}//g; s/ |.*//' "$W/kernels.log" | sort | uniq -c > "$W/by-name-$steps"
  wc -l < "$W/kernels.log"
}
a=$(count "$N" "$@"); b=$(count $((2 * N)) "$@")
echo "net $NET, batch $BATCH: $a kernels in $N steps, $b in $((2 * N)): $(( (b - a) / N )) a step"
join -1 2 -2 2 -a 1 -e 0 -o 0,1.1,2.1 <(awk '{print $1, $3}' "$W/by-name-$((2 * N))" | sort -k2) \
  <(awk '{print $1, $3}' "$W/by-name-$N" | sort -k2) \
  | awk -v n="$N" '{ d = ($2 - $3) / n; if (d > 0) printf "%8.1f  %s\n", d, $1 }' | sort -rn | head -12
