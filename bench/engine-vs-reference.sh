#!/usr/bin/env bash
# Move generation side by side with reference engines (docs/benchmarks.md, issue #33):
# flipzero's perft and make-move benchmarks at every instruction-set level this CPU
# runs (FLIPZERO_ISA=portable|avx2|avx512, one binary), and, when their paths are given,
# the reference programs on the same workloads; runs alternate, one core each (taskset),
# and the medians and their ratios are printed with the CPU.
#
#   bench/engine-vs-reference.sh [--runs N] [--cpu C] [--movegen PATH] [--clock cpu|wall]
#       [--ataxx NAME=PATH]... [--othello NAME=PATH]... [--only ataxx|othello|search]
#
# Rates are nodes per second of the process's CPU time (`perf stat -e task-clock`, a
# software counter that works in VMs without a PMU) when perf is installed, which keeps
# them steady on a machine that other jobs share; `--clock wall` takes each program's
# own wall-clock rate instead (right on an idle machine).
#
# Workloads (the node counts of every program must agree; the script checks them):
#   ataxx-bulk   Ataxx start, perft 7, bulk counting at the last ply
#   ataxx-make   Ataxx start, perft 6, every leaf made with the Zobrist hash updated:
#                every node generates its moves into a list on the stack; at depth 1
#                each move is made and the leaf's digest (hash ^ rotl(x, 7) ^
#                rotl(o, 29) ^ (halfmove | fullmove << 16 | side << 32)) is summed
#   othello      Othello start, perft 11, bulk counting (a pass is a move, a finished
#                game has no children)
#   search       flipzero only: `bench search`'s positions (alpha-beta, fixed depths)
#
# Reference programs are not built here. An --ataxx program takes `bulk D` or `make D`,
# an --othello program takes `D`; each prints one line with `nodes <count>` and
# `<rate> M nodes/s`. docs/benchmarks.md says how the recorded ones were built (libataxx
# and Edax, their commits and flags) and what their drivers do.
#
# --movegen names flipzero's bench binary (default: built here with
# `cargo build --release -p engine --example movegen`). An idle machine is best; on a
# shared one the CPU-time rates stay steady where wall-clock ones do not.
set -euo pipefail
runs=5
cpu=1
clock=""
movegen=""
only=""
ataxx=()
othello=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --cpu) cpu="$2"; shift 2 ;;
        --movegen) movegen="$2"; shift 2 ;;
        --ataxx) ataxx+=("$2"); shift 2 ;;
        --othello) othello+=("$2"); shift 2 ;;
        --only) only="$2"; shift 2 ;;
        --clock) clock="$2"; shift 2 ;;
        -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
        *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.."
if [ -z "$movegen" ]; then
    cargo build --release -p engine --example movegen >&2
    movegen=target/release/examples/movegen
fi
levels=$("$movegen" isa)
if [ -z "$clock" ]; then
    if perf stat -e task-clock -x, true >/dev/null 2>&1; then clock=cpu; else clock=wall; fi
fi

echo "# $(date -u +%Y-%m-%dT%H:%MZ)  flipzero $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "# CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p')  ($(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg))"
echo "# flags: $(grep -m1 -o -w 'avx2\|bmi2\|avx512f\|avx512bw\|avx512vl\|avx512cd\|avx512dq\|avx512_vpopcntdq\|popcnt\|lzcnt\|abm' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "# flipzero levels: $(echo $levels)   runs: $runs, alternating, taskset -c $cpu, clock: $clock"

# One workload: $1 = title, then "label|command" entries; prints median, best, ratios.
workload() {
    local title="$1"; shift
    local -a labels=() cmds=()
    local e
    for e in "$@"; do labels+=("${e%%|*}"); cmds+=("${e#*|}"); done
    local tmp; tmp=$(mktemp)
    local r i line rate nodes
    for ((r = 0; r < runs; r++)); do
        for i in "${!cmds[@]}"; do
            if [ "$clock" = cpu ]; then
                out=$(eval "taskset -c $cpu perf stat -e task-clock -x, ${cmds[$i]}" 2>&1 || true)
            else
                out=$(eval "taskset -c $cpu ${cmds[$i]}" 2>/dev/null || true)
            fi
            line=$(echo "$out" | grep 'M nodes/s' | tail -1)
            nodes=$(echo "$line" | grep -o 'nodes [0-9]*' | head -1 | cut -d' ' -f2)
            if [ "$clock" = cpu ]; then
                ms=$(echo "$out" | grep 'task-clock' | cut -d, -f1)
                rate=$(awk -v n="${nodes:-0}" -v ms="${ms:-0}" 'BEGIN { if (ms > 0) printf "%.1f", n / ms / 1000; else print 0 }')
            else
                rate=$(echo "$line" | grep -o '[0-9.]* M nodes/s' | cut -d' ' -f1)
            fi
            echo "$i ${rate:-0} ${nodes:-0}" >>"$tmp"
        done
    done
    echo
    echo "## $title"
    printf '%-28s %14s %10s %10s\n' program nodes median best
    local -a med=()
    for i in "${!cmds[@]}"; do
        med[$i]=$(awk -v i="$i" '$1 == i { print $2 }' "$tmp" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
        local best; best=$(awk -v i="$i" '$1 == i { print $2 }' "$tmp" | sort -g | tail -1)
        local n; n=$(awk -v i="$i" '$1 == i { print $3 }' "$tmp" | sort -u | tr '\n' ' ')
        printf '%-28s %14s %10s %10s  M nodes/s\n' "${labels[$i]}" "$n" "${med[$i]}" "$best"
    done
    if [ "$(awk '{ print $3 }' "$tmp" | sort -u | wc -l)" -ne 1 ]; then
        echo "!! the programs disagree on the node count"
    fi
    for i in "${!cmds[@]}"; do
        [[ "${labels[$i]}" == flipzero* ]] || continue
        local j
        for j in "${!cmds[@]}"; do
            [[ "${labels[$j]}" == flipzero* ]] && continue
            awk -v a="${med[$i]}" -v b="${med[$j]}" -v x="${labels[$i]}" -v y="${labels[$j]}" \
                'BEGIN { if (b > 0) printf "ratio %-28s / %-24s %6.2fx\n", x, y, a / b }'
        done
    done
    rm -f "$tmp"
}

flipzero_entries() {
    local args="$1" isa
    for isa in $levels; do
        echo "flipzero-$isa|env FLIPZERO_ISA=$isa $movegen $args"
    done
}

if [ -z "$only" ] || [ "$only" = ataxx ]; then
    mapfile -t e < <(flipzero_entries "ataxx-bulk 7")
    for a in "${ataxx[@]}"; do e+=("${a%%=*}|${a#*=} bulk 7"); done
    workload "Ataxx start, perft 7, bulk counting" "${e[@]}"
    mapfile -t e < <(flipzero_entries "ataxx-make 6")
    for a in "${ataxx[@]}"; do e+=("${a%%=*}|${a#*=} make 6"); done
    workload "Ataxx start, perft 6, every leaf made with the hash" "${e[@]}"
fi
if [ -z "$only" ] || [ "$only" = othello ]; then
    mapfile -t e < <(flipzero_entries "perft othello 11")
    for a in "${othello[@]}"; do e+=("${a%%=*}|${a#*=} 11"); done
    workload "Othello start, perft 11, bulk counting" "${e[@]}"
fi
if [ -z "$only" ] || [ "$only" = search ]; then
    mapfile -t e < <(flipzero_entries "search")
    workload "bench search positions (alpha-beta), nodes/s" "${e[@]}"
fi
