#!/usr/bin/env python3
"""Seconds a move of an NBoard engine at each level: it plays whole games against itself
(`set game` with the moves so far, then `go`), and its own `=== MOVE/EVAL/SECONDS`
answers are averaged, so that a level can be set beside flipzero's time a move.

    bench/egaroucid/level-times.py ENGINE [LEVEL ...] [-- ENGINE_ARGS ...]

Default levels 1 3 5 7 9 11 13. With the engine as the gauntlet plays it, the means
include the moves its opening book answers at once; `-- --no-book` (the Egaroucid front
end's option) times searched moves only.
"""
import statistics
import subprocess
import sys

START = "---------------------------O*------*O---------------------------"


def game_times(engine, level):
    p = subprocess.Popen(engine, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    moves, times, colour, passes = [], [], "B", 0
    p.stdin.write(f"nboard 2\nset depth {level}\n")
    while passes < 2:
        record = "".join(f"{c}[{m}]" for c, m in moves)
        p.stdin.write(f"set game (;GM[Othello]TY[8]BO[8 {START} *]{record};)\ngo\n")
        p.stdin.flush()
        line = p.stdout.readline()
        while not line.startswith("==="):
            if not line:
                sys.exit(f"{engine[0]} exited at level {level}")
            line = p.stdout.readline()
        fields = line[3:].strip().split("/")
        if len(fields) != 3:
            sys.exit(f"{engine[0]}: `{line.strip()[:80]}` is not `=== MOVE/EVAL/SECONDS`")
        move, secs = fields[0], fields[2]
        passes = passes + 1 if move == "PA" else 0
        if move != "PA":
            times.append(float(secs))
        moves.append((colour, move))
        colour = "W" if colour == "B" else "B"
    p.stdin.write("quit\n")
    p.stdin.close()
    p.wait()
    return times


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    args = sys.argv[1:]
    extra = args[args.index("--") + 1 :] if "--" in args else []
    args = args[: args.index("--")] if "--" in args else args
    engine = [args[0], *extra]
    levels = [int(x) for x in args[1:]] or [1, 3, 5, 7, 9, 11, 13]
    print("| level | mean ms a move | longest move, ms |")
    print("|---|---|---|")
    for level in levels:
        t = game_times(engine, level)
        print(f"| {level} | {1000 * statistics.mean(t):.1f} | {1000 * max(t):.0f} |")


main()
