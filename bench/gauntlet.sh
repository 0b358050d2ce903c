#!/usr/bin/env bash
# A gauntlet of a flipzero player against public UAI Ataxx engines, as a user would
# measure it: one thread each, balanced openings from bench/openings/ played with both
# colours, on a clock (tc=1+0.01 or tc=10+0.1), one game at a time. cuteataxx runs the
# games when its path is given (--cuteataxx or CUTEATAXX), `flipzero match` otherwise.
# The engines are built by the user from their public sources (docs/strength.md,
# "Gauntlet against public engines"); nothing of theirs is in this repository.
#
#   bench/gauntlet.sh (--model DIR | --player NAME) --engine NAME=PATH[:opt=val,...] ...
#
# Options:
#   --model DIR           a model directory (model.json) or a run directory (its best):
#                         `flipzero uai --model DIR` (MCTS with the net, on the clock)
#   --player NAME         any flipzero player instead: `ab` (alpha-beta on the clock),
#                         `mcts:DIR`, a ladder name (`flipzero uai --player NAME`)
#   --name LABEL          the player's name in the PGNs and tables (default flipzero-<model
#                         folder name>, or flipzero-<player>)
#   --option NAME=VALUE   a UAI option for the flipzero player (repeatable; Threads=1 is
#                         always sent)
#   --engine NAME=PATH[:opt=val,...]
#                         an opponent: a name (letters, digits, . _ -), the engine's binary,
#                         and UAI options to set (repeatable: one match per engine)
#   --engine-info NAME=TEXT
#                         what the engine is (repository, commit, build), for the records
#   --cuteataxx PATH      cuteataxx-cli binary (default: $CUTEATAXX; none: `flipzero match`)
#   --tc BASE+INC         the clock in seconds, e.g. 1+0.01 (default) or 10+0.1
#   --games N             games per engine, even (default 100): N/2 openings, both colours
#   --concurrency C       games at once, 1 (default) or 2 (one core each on the 2-core box)
#   --openings FILE       openings, one FEN a line (default bench/openings/ataxx-3ply.txt)
#   --seed S              which openings: the match takes N/2 openings from the file
#                         starting at (S-1)*N/2, cycling (default 1); also seeds
#                         `flipzero match`
#   --flipzero PATH       the flipzero binary (default: $FLIPZERO, else target/release/flipzero)
#   --out DIR             output folder (default: $OUT, else data/gauntlet/<UTC time>)
#   --results FILE        the TSV a line per match is appended to (default: $RESULTS, else
#                         results.tsv beside the output folder)
#
# Writes under OUT: machine.txt (date, CPU, load, the exact command, flipzero's commit,
# the engines and their info), openings.txt (the openings played, in order), and per
# engine <label>-vs-<engine>.{pgn,log,txt} (+ .json, cuteataxx's settings), then
# summary.md: W/D/L, score and Elo ± 95% (pentanomial pairs) of the player against each
# engine, with time losses, illegal moves and crashes/forfeits of each side.
set -euo pipefail

die() { echo "gauntlet: $*" >&2; exit 1; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
command_line="$(printf '%q ' "$0" "$@")"

model="" player="" name="" cute="${CUTEATAXX:-}" tc="1+0.01" games=100 concurrency=1
openings="$here/openings/ataxx-3ply.txt" seed=1 flipzero="${FLIPZERO:-}" out="${OUT:-}"
results="${RESULTS:-}"
engines=() player_options=("Threads=1")
declare -A engine_info=()

while [ $# -gt 0 ]; do
    opt="$1"
    case "$opt" in
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    esac
    [ $# -ge 2 ] || die "$opt needs a value (--help for usage)"
    case "$opt" in
        --model) model="$2" ;;
        --player) player="$2" ;;
        --name) name="$2" ;;
        --option) player_options+=("$2") ;;
        --engine) engines+=("$2") ;;
        --engine-info) engine_info["${2%%=*}"]="${2#*=}" ;;
        --cuteataxx) cute="$2" ;;
        --tc) tc="${2#tc=}" ;;
        --games) games="$2" ;;
        --concurrency) concurrency="$2" ;;
        --openings) openings="$2" ;;
        --seed) seed="$2" ;;
        --flipzero) flipzero="$2" ;;
        --out) out="$2" ;;
        --results) results="$2" ;;
        *) die "unknown option $opt (--help for usage)" ;;
    esac
    shift 2
done

# --- checks -----------------------------------------------------------------------
need_exe() { # need_exe WHAT PATH
    [ -e "$2" ] || die "$1 not found: $2"
    if [ ! -f "$2" ] || [ ! -x "$2" ]; then die "$1 is not an executable file: $2"; fi
}
command -v python3 >/dev/null || die "python3 is needed (scoring the PGNs)"
if [ -n "$model" ] && [ -n "$player" ]; then die "give --model or --player, not both"; fi
if [ -z "$model" ] && [ -z "$player" ]; then die "give the flipzero player: --model DIR or --player NAME"; fi
[ ${#engines[@]} -gt 0 ] || die "give at least one --engine NAME=PATH"
if ! [[ "$games" =~ ^[0-9]+$ ]] || [ "$games" -eq 0 ] || [ $((games % 2)) -ne 0 ]; then
    die "--games must be a positive even number (each opening is played with both colours), got $games"
fi
[[ "$concurrency" =~ ^[12]$ ]] || die "--concurrency is 1 or 2 (a game needs a core), got $concurrency"
if ! [[ "$seed" =~ ^[0-9]+$ ]] || [ "$seed" -lt 1 ]; then die "--seed must be a positive integer, got $seed"; fi
[[ "$tc" =~ ^([0-9]+(\.[0-9]+)?)\+([0-9]+(\.[0-9]+)?)$ ]] || die "--tc must be BASE+INC in seconds (e.g. 1+0.01), got $tc"
base_ms=$(python3 -c "print(round(float('${BASH_REMATCH[1]}') * 1000))")
inc_ms=$(python3 -c "print(round(float('${BASH_REMATCH[3]}') * 1000))")
[ "$base_ms" -gt 0 ] || die "--tc needs a positive base time"
[ -f "$openings" ] || die "openings file not found: $openings"

flipzero="${flipzero:-$repo/target/release/flipzero}"
need_exe "flipzero" "$flipzero"
flipzero="$(realpath "$flipzero")"
if [ -n "$model" ]; then
    [ -d "$model" ] || die "model directory not found: $model"
    [ -f "$model/model.json" ] || [ -f "$model/models/best" ] ||
        die "$model is neither a model directory (model.json) nor a run directory (models/best)"
    model="$(realpath "$model")"
    [[ "$model" != *[[:space:]]* ]] || die "the model path must not contain spaces: $model"
    name="${name:-flipzero-$(basename "$model")}"
    match_player="mcts:$model"
    uai_args="uai --model $model"
else
    [[ "$player" != *[[:space:]]* ]] || die "--player must not contain spaces: $player"
    # cuteataxx starts engines in their own folder: a model path in the spec is made absolute.
    if [[ "$player" == mcts:* ]]; then
        dir="${player#mcts:}" dir="${dir%%:*}"
        if [ -d "$dir" ]; then player="mcts:$(realpath "$dir")${player#mcts:"$dir"}"; fi
    fi
    label="$player"
    if [[ "$player" == mcts:* ]]; then
        dir="${player#mcts:}" dir="${dir%%:*}"
        label="mcts-$(basename "$dir")${player#mcts:"$dir"}"
    fi
    name="${name:-flipzero-${label//[^A-Za-z0-9._=-]/-}}"
    match_player="$player"
    uai_args="uai --player $player"
fi
[[ "$name" =~ ^[A-Za-z0-9._=-]+$ ]] || die "--name may use letters, digits and . _ = - only: $name"
if [ -n "$cute" ]; then
    need_exe "cuteataxx" "$cute"
    cute="$(realpath "$cute")"
elif [ ${#player_options[@]} -gt 1 ]; then
    die "--option sets UAI options of \`flipzero uai\`: it needs --cuteataxx (\`flipzero match\` plays the player in-process)"
fi

# Engines: NAME=PATH[:opt=val,...] -> parallel arrays.
e_names=() e_paths=() e_opts=()
for spec in "${engines[@]}"; do
    [[ "$spec" == *=* ]] || die "--engine takes NAME=PATH[:opt=val,...], got $spec"
    ename="${spec%%=*}" rest="${spec#*=}"
    epath="${rest%%:*}" eopts=""
    [[ "$rest" == *:* ]] && eopts="${rest#*:}"
    [[ "$ename" =~ ^[A-Za-z0-9._-]+$ ]] || die "engine name may use letters, digits and . _ - only: $ename"
    [ "$ename" != "$name" ] || die "engine $ename has the player's name"
    for n in "${e_names[@]}"; do [ "$n" != "$ename" ] || die "engine name $ename given twice"; done
    need_exe "engine $ename" "$epath"
    epath="$(realpath "$epath")"
    [[ "$epath" != *[[:space:]]* ]] || die "engine paths must not contain spaces: $epath"
    if [ -n "$eopts" ]; then
        IFS=',' read -r -a kv <<<"$eopts"
        for o in "${kv[@]}"; do [[ "$o" == ?*=* ]] || die "engine $ename: option '$o' is not name=value"; done
    fi
    e_names+=("$ename") e_paths+=("$epath") e_opts+=("$eopts")
done
for n in "${!engine_info[@]}"; do
    [[ " ${e_names[*]} " == *" $n "* ]] || die "--engine-info names $n, which is not an --engine"
done

# Every engine answers the UAI handshake (clear error now rather than a forfeited match).
handshake() { # handshake NAME CMD...
    python3 "$here/uai-check.py" --quiet "${@:2}" ||
        die "$1 did not answer uai/isready with uaiok/readyok: ${*:2}"
}
read -r -a fz_cmd <<<"$uai_args"
handshake "$name" "$flipzero" "${fz_cmd[@]}"
for i in "${!e_names[@]}"; do handshake "${e_names[$i]}" "${e_paths[$i]}"; done

# --- output folder and records ---------------------------------------------------
out="${out:-$repo/data/gauntlet/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
out="$(realpath "$out")"
results="${results:-$(dirname "$out")/results.tsv}"
mkdir -p "$(dirname "$results")"

# The openings played: N/2 from the file (comments skipped), from (seed-1)*N/2 on, cycling.
pairs=$((games / 2))
grep -v '^#' "$openings" | grep -v '^[[:space:]]*$' >"$out/openings.all" || true
count=$(wc -l <"$out/openings.all")
[ "$count" -gt 0 ] || die "no openings in $openings"
python3 - "$out/openings.all" "$count" "$pairs" "$seed" >"$out/openings.txt" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
count, pairs, seed = map(int, sys.argv[2:])
start = (seed - 1) * pairs
print("\n".join(lines[(start + i) % count] for i in range(pairs)))
EOF
rm -f "$out/openings.all"
[ "$pairs" -le "$count" ] || echo "gauntlet: note: $pairs openings wanted, $count in the file: some repeat" >&2

cpu="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
commit="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
git -C "$repo" diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
runner="${cute:+cuteataxx}"
runner="${runner:-flipzero-match}"
{
    echo "== $(date -u +%FT%TZ)"
    echo "command: $command_line"
    echo "cpu: $cpu ($(nproc) cores), load average at start: $load"
    echo "flipzero: $flipzero (repository at $commit, $("$flipzero" --version 2>/dev/null || true))"
    echo "player: $name = ${model:+flipzero uai --model $model}${player:+flipzero uai --player $player}; options: ${player_options[*]}"
    echo "runner: $runner${cute:+ ($cute)}; tc $tc; $games games per engine; concurrency $concurrency"
    echo "openings: $openings ($count), $pairs from index $(((seed - 1) * pairs % count)) (seed $seed)"
    for i in "${!e_names[@]}"; do
        echo "engine ${e_names[$i]}: ${e_paths[$i]}${e_opts[$i]:+ options ${e_opts[$i]}}; ${engine_info[${e_names[$i]}]:-no --engine-info}"
    done
} >>"$out/machine.txt"
awk -v l="${load%% *}" 'BEGIN { exit !(l > 1.5) }' &&
    echo "gauntlet: warning: load average $load at start; timed games want an idle machine" >&2

# --- one match per engine --------------------------------------------------------
json_str() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
json_opts() { # json_opts "a=b,c=d" or "a=b" "c=d" ... -> {"a": "b", ...}
    python3 -c '
import json, sys
kv = [p for a in sys.argv[1:] for p in a.split(",") if p]
print(json.dumps({k: v for k, v in (p.split("=", 1) for p in kv)}))' "$@"
}

play_cuteataxx() { # play_cuteataxx INDEX STEM
    local i="$1" stem="$2"
    cat >"$stem.json" <<EOF
{
    "games": $games,
    "concurrency": $concurrency,
    "ratinginterval": 10,
    "verbose": false,
    "debug": false,
    "colour1": "Black",
    "colour2": "White",
    "tournament": "roundrobin",
    "print_early": false,
    "adjudicate": { "gamelength": 1000 },
    "openings": { "path": $(json_str "$out/openings.txt"), "repeat": true, "shuffle": false },
    "timecontrol": { "time": $base_ms, "inc": $inc_ms },
    "pgn": { "enabled": true, "verbose": true, "override": true, "path": $(json_str "$stem.pgn"), "event": $(json_str "gauntlet tc $tc") },
    "engines": [
        { "name": "$name", "path": $(json_str "$flipzero"), "arguments": $(json_str "$uai_args"),
          "protocol": "UAI", "options": $(json_opts "${player_options[@]}") },
        { "name": "${e_names[$i]}", "path": $(json_str "${e_paths[$i]}"), "protocol": "UAI",
          "options": $(json_opts "${e_opts[$i]}") }
    ]
}
EOF
    local rc=0
    "$cute" "$stem.json" >"$stem.log" 2>&1 || rc=$?
    # cuteataxx exits 0 on its own errors too (they are in the log); it is killed by
    # SIGPIPE when an engine died in an earlier game.
    if [ "$rc" -ne 0 ] || ! grep -q '^Total games:' "$stem.log"; then
        echo "gauntlet: cuteataxx stopped early (exit $rc; see $stem.log)" >&2
        return 1
    fi
}

play_flipzero_match() { # play_flipzero_match INDEX STEM
    local i="$1" stem="$2"
    local spec="uai:${e_paths[$i]}"
    [ -n "${e_opts[$i]}" ] && spec="$spec:${e_opts[$i]}"
    "$flipzero" match --a "$match_player" --b "$spec" --games "$games" --openings "$out/openings.txt" \
        --clock "tc=$tc" --threads "$concurrency" --seed "$seed" --pgn "$stem.pgn" --quiet \
        >"$stem.log" 2>&1 || { echo "gauntlet: flipzero match failed (see $stem.log)" >&2; return 1; }
}

tsv_header="date	player	player_spec	engine	engine_info	tc	runner	games	wins	draws	losses	score	elo	ci95	pentanomial	time_losses_player	time_losses_engine	illegal_player	illegal_engine	crashes_player	crashes_engine	adjudicated	unfinished	flipzero_commit	cpu	out"
[ -s "$results" ] || echo "$tsv_header" >"$results"

summary="$out/summary.md"
{
    echo "# $name: gauntlet at tc $tc ($runner, concurrency $concurrency)"
    echo
    echo "| engine | what | games | W / D / L | score | Elo (95%) | pentanomial | time losses | illegal moves | crashes, forfeits |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$summary"

status=0
for i in "${!e_names[@]}"; do
    ename="${e_names[$i]}"
    stem="$out/$name-vs-$ename"
    echo "== $name vs $ename: $games games at tc $tc ($runner)" >&2
    start=$(date +%s)
    if [ -n "$cute" ]; then
        play_cuteataxx "$i" "$stem" || status=1
        pname="$name" epname="$ename"
    else
        play_flipzero_match "$i" "$stem" || status=1
        # Its PGN names the players by their specs: A is Black in the first game of a pair.
        pname="@A" epname="@B"
    fi
    secs=$(($(date +%s) - start))
    touch "$stem.pgn"
    python3 "$here/gauntlet-score.py" "$stem.pgn" "$pname" "$epname" | tee "$stem.txt" >&2
    echo "wall time: ${secs}s" >>"$stem.txt"
    IFS=$'\t' read -r g w d l sc elo ci penta tlp tle ilp ile crp cre adj unf \
        <<<"$(python3 "$here/gauntlet-score.py" "$stem.pgn" "$pname" "$epname" --tsv)"
    [ "$g" -eq "$games" ] || { echo "gauntlet: $ename: $g of $games games finished (see $stem.log)" >&2; status=1; }
    [ $((tlp + ilp + crp)) -eq 0 ] || { echo "gauntlet: $name lost games on time, by illegal moves or crashes against $ename" >&2; status=1; }
    info="${engine_info[$ename]:-}"
    info="${info//	/ }"
    echo "| $ename | ${info:-–} | $g | $w / $d / $l | $sc | $elo ± $ci | [$penta] | $tlp / $tle | $ilp / $ile | $crp / $cre |" >>"$summary"
    printf '%s\n' "$(date -u +%FT%TZ)	$name	${model:-$player}	$ename	$info	$tc	$runner	$g	$w	$d	$l	$sc	$elo	$ci	$penta	$tlp	$tle	$ilp	$ile	$crp	$cre	$adj	$unf	$commit	$cpu	$out" >>"$results"
done
{
    echo
    echo "W / D / L, score and Elo are $name's; the last three columns read $name / engine."
    echo "Elo ± the 95% interval from the pairs of games of each opening (colours swapped)."
    echo "Command: \`$command_line\`"
} >>"$summary"
cat "$summary"
echo "gauntlet: results in $out, a line per match appended to $results" >&2
exit "$status"
