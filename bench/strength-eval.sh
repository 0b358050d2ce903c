#!/usr/bin/env bash
# The strength measurements of docs/strength.md for a run: its best network with MCTS
# against flipzero's own alpha-beta at equal time (100 ms and 1 s a move, both sides on
# one core: two games at once on the 2-core machine, nothing else running) and against
# ab6 at 800 simulations. Each match writes its PGN and its summary under RUN/strength/.
#
#   bench/strength-eval.sh RUN_DIR [GAMES_100MS] [GAMES_1S] [GAMES_AB6]
#
# Defaults: 200, 100 and 100 games (the issue's targets); a count of 0 skips a match.
# FLIPZERO names the binary (default target/release/flipzero, from `make build`).
set -euo pipefail
run="${1:?usage: bench/strength-eval.sh RUN_DIR [GAMES_100MS] [GAMES_1S] [GAMES_AB6]}"
bin="${FLIPZERO:-target/release/flipzero}"
out="$run/strength"
mkdir -p "$out"
# The best when this starts, by its folder: a later promotion does not change the player.
model="$run/models/$(cat "$run/models/best")"
{
    date -u +%FT%TZ
    lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | sed 's/\(Flags:\).*\(avx512f\).*/\1 … \2 …/'
    echo "model: $model"
} >"$out/machine.txt"
match() {
    local name="$1" games="$2"
    shift 2
    if [ "$games" -eq 0 ]; then
        return
    fi
    echo "== $name: $games games"
    "$bin" match "$@" --games "$games" --threads 2 --pgn "$out/$name.pgn" --quiet \
        | tee "$out/$name.txt"
}
match time100 "${2:-200}" --a "mcts:$model" --b ab --clock time=100
match time1000 "${3:-100}" --a "mcts:$model" --b ab --clock time=1000
match ab6-800sims "${4:-100}" --a "mcts:$model:sims=800" --b ab6
