#!/usr/bin/env bash
# The ablation table of docs/strength.md: the strength preset run for MINUTES minutes
# (the same wall-clock budget each, on an otherwise idle machine) as it is, and with
# each learning-per-compute technique of issue #17 switched off in turn; then each
# run's final best plays the full preset's final best and ab5 (equal simulations), and
# the scores give Elo at equal compute with 95% intervals (`flipzero match` prints them).
# Last, the play-time search: the full run's best at 100 ms a move with its search as
# built (tree reuse, batched leaves) against the same net with `search=basic` (one leaf
# per call, the tree discarded after every move), on the same clock.
#
#   bench/ablations.sh [OUT_DIR] [MINUTES] [GAMES]   (default data/ablations, 30, 200)
#
# FLIPZERO names the binary (default target/release/flipzero). Runs one after another:
# 4 × MINUTES of training, then 8 matches.
set -euo pipefail
out="${1:-data/ablations}"
minutes="${2:-30}"
games="${3:-200}"
bin="${FLIPZERO:-target/release/flipzero}"
mkdir -p "$out"
declare -A variants=(
    [full]=""
    [no-ownership]='--set train.heads=["policy","wdl","score"]'
    [no-surprise]="--set train.surprise_weight=0"
    [fixed-window]="--set train.window_exponent=0"
)
for name in full no-ownership no-surprise fixed-window; do
    # shellcheck disable=SC2086 # the variant's --set arguments split on spaces
    "$bin" run --config configs/strength.toml --run "$out/$name" --quiet \
        --set run.time_budget_minutes="$minutes" ${variants[$name]} \
        >"$out/$name.log" 2>&1
done
best() { echo "$out/$1/models/$(cat "$out/$1/models/best")"; }
for name in no-ownership no-surprise fixed-window; do
    "$bin" match --a "mcts:$(best "$name"):sims=128" --b "mcts:$(best full):sims=128" \
        --games "$games" --threads 2 --quiet --pgn "$out/$name-vs-full.pgn" \
        | tee "$out/$name-vs-full.txt"
done
for name in full no-ownership no-surprise fixed-window; do
    "$bin" match --a "mcts:$(best "$name"):sims=128" --b ab5 \
        --games "$games" --threads 2 --quiet --pgn "$out/$name-vs-ab5.pgn" \
        | tee "$out/$name-vs-ab5.txt"
done
"$bin" match --a "mcts:$(best full)" --b "mcts:$(best full):search=basic" --clock time=100 \
    --games "$games" --threads 2 --quiet --pgn "$out/search-vs-basic.pgn" \
    | tee "$out/search-vs-basic.txt"
