#!/usr/bin/env python3
"""Nodes a second of UAI engines over one game line, as in a game: the position after
each ply, `go nodes N` from it, the engine's tree and caches kept from ply to ply (one
process a run). The line is played first by the `--line` engine (its own best moves,
PLIES plies from the start, not measured), then every engine searches its positions.
Give a third engine for the line: an engine whose own moves make the line keeps the
largest subtrees from ply to ply (it predicted every move), and a larger tree is slower
to search, so the line's author (and a copy of it) is measured on other work than the
rest. Engines run in turn, ROUNDS times, so that a machine that gets busier or quieter
moves every figure alike.

    bench/uai-line-nps.py [--nodes 50000] [--plies 40] [--rounds 2] \\
        --line 'ab=target/release/flipzero uai' \\
        'head=/tmp/flipzero-before uai;Model=docs/strength/fast-quick/best' \\
        'new=target/release/flipzero uai;Model=docs/strength/fast-quick/best'

An engine is NAME=COMMAND[;Option=value...]; COMMAND is run by sh (so `VAR=x cmd`
works). Prints, per round and engine, the nodes and milliseconds summed over the plies
from the last `info` line of each search that gives `nodes` and `time`, and their ratio;
then the wall-clock time from each `go` sent to its `bestmove` read, summed, and the
nodes over it (what a game's clock sees: an engine's own time may leave out the work
before its search, such as moving the tree to the new root).

With --same, each round also says whether every engine searched as the first one did:
the same best move and the same last `info` line, its timing fields (`time`, `nps`)
left out, at every ply (flipzero's names its evaluations, reused visits and cache hits:
two builds whose searches are the same bits agree on all of them).
"""

import argparse
import re
import subprocess
import sys
import time

NODES = re.compile(r" nodes (\d+)")
TIME = re.compile(r" time (\d+)")
TIMING = re.compile(r" (time|nps) \d+")


def parse(spec):
    name, _, rest = spec.partition("=")
    cmd, *opts = rest.split(";")
    if not name or not cmd:
        sys.exit(f"uai-line-nps: expected NAME=COMMAND[;Option=value...], got {spec!r}")
    options = []
    for o in opts:
        k, eq, v = o.partition("=")
        if not eq:
            sys.exit(f"uai-line-nps: expected Option=value, got {o!r} in {spec!r}")
        options.append((k, v))
    return name, cmd, options


def run(cmd, options, nodes, plies, line):
    """Searches the positions of `line` (or plays a line of `plies` when it is None);
    returns (moves played, nodes, milliseconds, wall-clock seconds, and a trace: each
    ply's best move and last info line without its timing)."""
    p = subprocess.Popen(
        ["sh", "-c", cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )

    def send(s):
        try:
            p.stdin.write(s + "\n")
            p.stdin.flush()
        except BrokenPipeError:
            sys.exit(f"uai-line-nps: `{cmd}` ended before `{s}`")

    def until(prefix):
        while True:
            out = p.stdout.readline()
            if not out:
                sys.exit(f"uai-line-nps: `{cmd}` ended before `{prefix}`")
            out = out.strip()
            yield out
            if out.startswith(prefix):
                return

    send("uai")
    for _ in until("uaiok"):
        pass
    for k, v in options:
        send(f"setoption name {k} value {v}")
    send("isready")
    for _ in until("readyok"):
        pass
    moves, total_nodes, total_ms, total_wall, trace = [], 0, 0, 0.0, []
    count = len(line) if line is not None else plies
    for i in range(count):
        send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
        t0 = time.perf_counter()
        send(f"go nodes {nodes}")
        last, best = None, None
        for out in until("bestmove"):
            if out.startswith("info") and NODES.search(out) and TIME.search(out):
                last = out
            if out.startswith("bestmove"):
                best = out.split()[1]
        total_wall += time.perf_counter() - t0
        if last is None:
            sys.exit(f"uai-line-nps: `{cmd}` gave no nodes/time info at ply {i}")
        total_nodes += int(NODES.search(last).group(1))
        total_ms += int(TIME.search(last).group(1))
        trace.append((best, TIMING.sub("", last)))
        nxt = line[i] if line is not None else best
        if nxt in ("0000", "(none)", None):
            break
        moves.append(nxt)
    send("quit")
    p.wait(timeout=30)
    return moves, total_nodes, total_ms, total_wall, trace


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=50000)
    ap.add_argument("--plies", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--line", required=True, help="the engine that plays the line, NAME=COMMAND[;...]")
    ap.add_argument("--same", action="store_true", help="say whether each engine searched as the first")
    ap.add_argument("engines", nargs="+")
    a = ap.parse_args()
    engines = [parse(s) for s in a.engines]
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"cpu: {cpu}; go nodes {a.nodes}, {a.plies} plies")
    _, cmd, options = parse(a.line)
    line = run(cmd, options, a.nodes, a.plies, None)[0]
    print(f"line ({len(line)} plies): {' '.join(line)}")
    for r in range(1, a.rounds + 1):
        first = None
        for name, cmd, options in engines:
            moves, nodes, ms, wall, trace = run(cmd, options, a.nodes, a.plies, line)
            print(
                f"round {r}  {name:<16} plies {len(moves):3}  nodes {nodes:9}  "
                f"ms {ms:6}  nodes/s {nodes * 1000 // max(ms, 1):8}  "
                f"wall ms {wall * 1000:6.0f}  nodes/wall s {nodes / max(wall, 1e-9):8.0f}",
                flush=True,
            )
            if a.same and first is None:
                first = (name, trace)
            elif a.same:
                differ = [i for i, (x, y) in enumerate(zip(first[1], trace)) if x != y]
                if len(trace) != len(first[1]):
                    differ.append(min(len(trace), len(first[1])))
                verdict = f"differs from {first[0]} at plies {differ}" if differ else f"the same searches as {first[0]}"
                print(f"round {r}  {name:<16} {verdict}", flush=True)


if __name__ == "__main__":
    main()
