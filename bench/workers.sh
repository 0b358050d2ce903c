#!/usr/bin/env bash
# Self-play throughput of separate worker processes on one machine (docs/benchmarks.md,
# issue #18): the same games played by one `flipzero worker selfplay` with 2 threads,
# then by two workers of 1 thread each, on a run whose best is a trained network
# (gen-0000 of a default run stopped after one generation). Prints games, positions and
# wall-clock seconds of each case.
#
#   bench/workers.sh [WORK_DIR] [GAMES]      (default /tmp/flipzero-workers-bench, 128;
#                                             GAMES a multiple of 64: batches are 32 games)
#
# FLIPZERO names the binary (default target/release/flipzero). Run it on an idle machine.
set -euo pipefail
work="${1:-/tmp/flipzero-workers-bench}"
games="${2:-128}"
bin="${FLIPZERO:-target/release/flipzero}"
rm -rf "$work"
mkdir -p "$work"
run="$work/run"
# One generation (the time budget stops the loop after it), of a run that is not
# finished, so that the workers play on: its best is gen-0000.
"$bin" run --config configs/default.toml --run "$run" --quiet \
    --set run.generations=100 --set run.time_budget_minutes=0.1 --set selfplay.games=64 >/dev/null
half=$((games / 2))
count() {
    # games and positions of the batches published since the marker file
    find "$run/selfplay" -maxdepth 2 -name summary.json -newer "$1" -print0 \
        | xargs -0 -r cat \
        | tr -d ' \n' | grep -o '"games":[0-9]*\|"positions":[0-9]*' \
        | awk -F: '{ s[$1] += $2 } END { printf "games %d positions %d", s["\"games\""], s["\"positions\""] }'
}
lscpu | grep 'Model name'
echo "best: $(cat "$run/models/best")"
touch "$work/one"
sleep 1
start=$(date +%s.%N)
"$bin" worker selfplay --run "$run" --quiet --batches "$((games / 32))" --set selfplay.threads=2
end=$(date +%s.%N)
echo "1 worker x 2 threads: $(count "$work/one") seconds $(awk "BEGIN { print $end - $start }")"
touch "$work/two"
sleep 1
start=$(date +%s.%N)
"$bin" worker selfplay --run "$run" --quiet --batches "$((half / 32))" --set selfplay.threads=1 &
a=$!
"$bin" worker selfplay --run "$run" --quiet --batches "$((half / 32))" --set selfplay.threads=1 &
b=$!
wait "$a"
wait "$b"
end=$(date +%s.%N)
echo "2 workers x 1 thread: $(count "$work/two") seconds $(awk "BEGIN { print $end - $start }")"
