#!/usr/bin/env bash
# An Othello gauntlet: a flipzero model (MCTS with its net, a fixed time a move) against
# a public NBoard engine at fixed levels (`set depth N`), paired games (each opening
# played with both colours), one game at a time by default. The engine is built by the
# user from its public source (for Egaroucid's web engine: bench/egaroucid/build.sh);
# nothing of it is in this repository.
#
#   bench/othello-gauntlet.sh --model DIR --engine PATH [options]
#
# Options:
#   --model DIR         a model directory (model.json) or a run directory (its best)
#   --engine PATH       the NBoard engine's program (no arguments: wrap it in a script
#                       that `exec`s it, so that stopping the script stops the engine)
#   --engine-info TEXT  what the engine is (repository, commit, build), for the records
#   --levels "L ..."    the engine's levels, one match each (default "1 3 5 7 9 11")
#   --time MS           the model's time a move (default 100)
#   --search OPTS       the MCTS player's settings, appended to its name (e.g.
#                       "endgame=8,cpuct=1.3"; see `flipzero match --help`)
#   --games N           games a level, even (default 100)
#   --random-plies R    random plies of the generated openings (default 4)
#   --move-timeout-ms MS
#                       how long the engine may take for a move before it forfeits the
#                       game (default 5000: deep levels need more; its forfeits are
#                       counted apart in the summary)
#   --threads T         games at once (default 1; 2 on the 2-core box halves the wall
#                       time: each game has one side thinking at a time)
#   --seed S            seed of the openings and the players (default 1)
#   --flipzero PATH     the flipzero binary (default: $FLIPZERO, else target/release/flipzero)
#   --out DIR           output folder (default data/othello-gauntlet/<UTC time>)
#
# Writes under OUT: machine.txt (date, CPU, the command, flipzero's commit, the engine),
# level-L.{pgn,txt} per level, and summary.md: W/D/L, score and Elo ± 95% (pentanomial
# pairs) of the model against each level, with forfeits.
set -euo pipefail

die() { echo "othello-gauntlet: $*" >&2; exit 1; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
command_line="$(printf '%q ' "$0" "$@")"

model="" engine="" info="" levels="1 3 5 7 9 11" time=100 search="" games=100 plies=4 threads=1
move_timeout=5000
seed=1 flipzero="${FLIPZERO:-}" out=""
while [ $# -gt 0 ]; do
    case "$1" in
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        --model | --engine | --engine-info | --levels | --time | --search | --games | \
            --random-plies | --move-timeout-ms | --threads | --seed | --flipzero | --out)
            [ $# -ge 2 ] || die "$1 needs a value"
            case "$1" in
                --model) model="$2" ;;
                --engine) engine="$2" ;;
                --engine-info) info="$2" ;;
                --levels) levels="$2" ;;
                --time) time="$2" ;;
                --search) search="$2" ;;
                --games) games="$2" ;;
                --random-plies) plies="$2" ;;
                --move-timeout-ms) move_timeout="$2" ;;
                --threads) threads="$2" ;;
                --seed) seed="$2" ;;
                --flipzero) flipzero="$2" ;;
                --out) out="$2" ;;
            esac
            shift 2
            ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
[ -n "$model" ] || die "--model DIR is required"
[ -n "$engine" ] || die "--engine PATH is required"
[ -x "$engine" ] && [ -f "$engine" ] || die "--engine $engine is not an executable file"
for n in "$time" "$games" "$plies" "$move_timeout" "$threads" "$seed"; do
    [[ "$n" =~ ^[0-9]+$ ]] || die "\`$n\` is not a number"
done
[ $((games % 2)) -eq 0 ] && [ "$games" -gt 0 ] || die "--games must be even and positive"
for l in $levels; do
    [[ "$l" =~ ^[0-9]+$ ]] && [ "$l" -ge 1 ] && [ "$l" -le 60 ] || die "level \`$l\` is not 1..60"
done
flipzero="${flipzero:-$repo/target/release/flipzero}"
[ -x "$flipzero" ] || die "no flipzero binary at $flipzero (make build, or --flipzero PATH)"
player="mcts:$model:time=$time${search:+,$search}"
out="${out:-$repo/data/othello-gauntlet/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"

simd="no AVX2"
if grep -qw avx512f /proc/cpuinfo; then simd="AVX-512"; elif grep -qw avx2 /proc/cpuinfo; then simd="AVX2, no AVX-512"; fi
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) cores; $simd)"
    echo "command: $command_line"
    echo "flipzero: $("$flipzero" --version) at $flipzero; the checkout: $(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)"
    echo "model: $model"
    echo "engine: $engine"
    echo "engine info: ${info:-(not given)}"
    echo "player: $player; games $games a level, random plies $plies, seed $seed, threads $threads"
} >"$out/machine.txt"

summary="$out/summary.md"
{
    echo "| engine level | W/D/L (model) | score | Elo ± 95% | forfeits (model / engine) |"
    echo "|---|---|---|---|---|"
} >"$summary"
for level in $levels; do
    echo "level $level: $games games ..." >&2
    "$flipzero" match --game othello --a "$player" \
        --b "nboard:$engine:depth=$level" --games "$games" --random-plies "$plies" \
        --move-timeout-ms "$move_timeout" --threads "$threads" --seed "$seed" \
        --pgn "$out/level-$level.pgn" --quiet \
        >"$out/level-$level.txt" 2>&1 || die "level $level: the match failed (see $out/level-$level.txt)"
    wdl=$(sed -n 's/^W\/D\/L (A): \([0-9/]*\).*/\1/p' "$out/level-$level.txt")
    read -r _ score _ elo _ ci _ n < <(tail -n 1 "$out/level-$level.txt")
    forfeits=$(sed -n 's/^forfeits: [0-9]* (A \([0-9]*\), B \([0-9]*\);.*/\1 \/ \2/p' "$out/level-$level.txt")
    echo "| $level | $wdl | $score | $elo ± $ci | ${forfeits:-0 / 0} |" >>"$summary"
    echo "level $level: score $score ($wdl) in $n games" >&2
done
cat "$summary"
