#!/usr/bin/env bash
# Places the rungs of the fixed ladder that a run's anchoring does not play (ab6, and
# alpha-beta at a fixed time per move) on the run's rating scale, so that the curve of
# docs/strength.md reads against the whole ladder: alpha-beta players meet the run's
# own baselines (the same deterministic players), and `flipzero ratings` fits them with
# the run's recorded games in one list.
#
#   bench/ladder-scale.sh RUN [GAMES] [TIMES_MS]   (default 200 games, "100"; "" for none)
#
# RUN is a run directory, or one holding only eval/ (docs/strength/run/eval-json.tar.xz
# unpacked). Each match is GAMES games, 4 random plies of opening (as the strength
# preset's anchors), 2 at once. ab6 meets ab5 and ab4; each ab:time=MS,search=full of TIMES_MS
# (space-separated) meets ab5 and ab6. The fixed-depth matches do not depend on the
# machine's load; the timed ones want an idle machine. PGNs, summaries and the rating
# list go under OUT (default RUN/ladder); the list rates every PGN in OUT, so OUT should
# hold only this script's matches. SEED (default 1) seeds the openings;
# FLIPZERO names the binary (default target/release/flipzero).
set -euo pipefail
run="${1:?usage: bench/ladder-scale.sh RUN [GAMES] [TIMES_MS]}"
games="${2:-200}"
times="${3-100}"
seed="${SEED:-1}"
bin="${FLIPZERO:-target/release/flipzero}"
out="${OUT:-$run/ladder}"
mkdir -p "$out"
{
    echo "== $(date -u +%FT%TZ), seed $seed"
    lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | sed 's/\(Flags:\).*\(avx512f\).*/\1 … \2 …/' || true
} >>"$out/machine.txt"
match() {
    local a="$1" b="$2" name
    name="$(echo "$a-vs-$b" | tr ':=' '--')"
    # A match already played with this seed and game count is kept, not replayed.
    if ! grep -qs "games: $games\$" "$out/$name-seed$seed.txt"; then
        echo "== $a vs $b: $games games, seed $seed"
        "$bin" match --a "$a" --b "$b" --games "$games" --seed "$seed" --random-plies 4 \
            --threads 2 --pgn "$out/$name-seed$seed.pgn" --quiet | tee "$out/$name-seed$seed.txt"
    fi
}
match ab6 ab5
match ab6 ab4
for ms in $times; do
    match "ab:time=$ms,search=full" ab5
    match "ab:time=$ms,search=full" ab6
done
pgns=()
for f in "$out"/*.pgn; do
    pgns+=(--pgn "$f")
done
"$bin" ratings --run "$run" "${pgns[@]}" | tee "$out/ratings.txt"
