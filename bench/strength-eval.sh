#!/usr/bin/env bash
# The strength measurements of docs/strength.md for a run: its best network with MCTS
# against flipzero's own alpha-beta at equal time (100 ms and 1 s a move, both sides on
# one core: two games at once on the 2-core machine, nothing else running) and against
# ab6 at 800 simulations; and the play-time search ablation: the same net at 100 ms a
# move with its search as built (tree reuse, batched leaves) against itself with
# `search=basic` (one leaf per evaluator call, the tree discarded after every move).
# Each match writes its PGN and its summary under OUT (below), named with its seed.
#
#   bench/strength-eval.sh RUN_OR_MODEL [GAMES_100MS] [GAMES_1S] [GAMES_AB6] [GAMES_BASIC]
#
# RUN_OR_MODEL is a run directory (its best when this starts) or a model directory
# (one holding model.json, e.g. the kept docs/strength/gen-NNNN). OUT names the folder
# of the results (default RUN/strength for a run, MODEL/strength for a model).
# Defaults: 200, 100, 100 and 200 games (the issue's targets); a count of 0 skips a
# match. SEED (default 1) seeds the openings: a match split over several sittings
# plays each part with its own seed, so that the parts draw different openings.
# FLIPZERO names the binary (default target/release/flipzero, from `make build`).
set -euo pipefail
run="${1:?usage: bench/strength-eval.sh RUN_OR_MODEL [GAMES_100MS] [GAMES_1S] [GAMES_AB6] [GAMES_BASIC]}"
seed="${SEED:-1}"
bin="${FLIPZERO:-target/release/flipzero}"
out="${OUT:-$run/strength}"
mkdir -p "$out"
if [ -f "$run/model.json" ]; then
    model="$run"
else
    # The best when this starts, by its folder: a later promotion does not change the player.
    model="$run/models/$(cat "$run/models/best")"
fi
# One entry per sitting: when, on what, with which model and seed.
{
    echo "== $(date -u +%FT%TZ), seed $seed"
    lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | sed 's/\(Flags:\).*\(avx512f\).*/\1 … \2 …/'
    echo "model: $model"
} >>"$out/machine.txt"
match() {
    local name="$1" games="$2"
    shift 2
    if [ "$games" -eq 0 ]; then
        return
    fi
    echo "== $name: $games games, seed $seed"
    "$bin" match "$@" --games "$games" --seed "$seed" --threads 2 \
        --pgn "$out/$name-seed$seed.pgn" --quiet | tee "$out/$name-seed$seed.txt"
}
match time100 "${2:-200}" --a "mcts:$model" --b ab:search=full --clock time=100
match time1000 "${3:-100}" --a "mcts:$model" --b ab:search=full --clock time=1000
match ab6-800sims "${4:-100}" --a "mcts:$model:sims=800" --b ab6
match search-vs-basic "${5:-200}" --a "mcts:$model" --b "mcts:$model:search=basic" \
    --clock time=100
