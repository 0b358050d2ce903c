#!/usr/bin/env bash
# The ablation table of docs/strength.md: the strength preset for GENERATIONS
# generations as it is, and with each learning-per-compute technique of issue #17
# switched off in turn (the ownership head, policy-surprise weighting, the growing
# window). Every variant does the same work: the same generations of the same games,
# simulations and training steps (the ownership head adds a few percent to a training
# step), so the comparison is at equal compute and does not depend on the machine's
# load: these runs may share the machine (e.g. `nice -n 19`). Anchoring is off (the
# variants are compared directly). Then each variant's final best plays the full run's
# final best at 128 simulations a move, and `flipzero match` prints the Elo difference
# with its 95% interval.
#
#   bench/ablations.sh [OUT_DIR] [GENERATIONS] [GAMES]   (default data/ablations, 9, 200)
#
# FLIPZERO names the binary (default target/release/flipzero). A variant whose run
# directory exists is resumed (a finished run only prints its summary). The play-time
# search ablation (MCTS as built against `search=basic` at 100 ms a move) is timed and
# needs an idle machine: bench/strength-eval.sh plays it.
set -euo pipefail
out="${1:-data/ablations}"
generations="${2:-9}"
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
        --set run.generations="$generations" --set run.time_budget_minutes=0 \
        --set 'anchor.ladder=[]' ${variants[$name]} \
        >>"$out/$name.log" 2>&1
done
best() { echo "$out/$1/models/$(cat "$out/$1/models/best")"; }
for name in no-ownership no-surprise fixed-window; do
    if [ -s "$out/$name-vs-full.txt" ]; then
        continue
    fi
    "$bin" match --a "mcts:$(best "$name"):sims=128" --b "mcts:$(best full):sims=128" \
        --games "$games" --threads 2 --quiet --pgn "$out/$name-vs-full.pgn" \
        >"$out/$name-vs-full.tmp"
    mv "$out/$name-vs-full.tmp" "$out/$name-vs-full.txt"
    cat "$out/$name-vs-full.txt"
done
