#!/usr/bin/env python3
"""Balanced Ataxx openings for bench/gauntlet.sh: every distinct position a few plies
from the standard start (no blockers), scored by flipzero's alpha-beta at a fixed depth,
kept when the score is near equal, written as FENs (one a line, `#` header lines that
record the command) in a fixed, seeded order.

    python3 bench/ataxx-openings.py FLIPZERO [--plies 3] [--depth 7] [--max-cp 60] \\
        [--seed 1] > bench/openings/ataxx-3ply.txt

FLIPZERO is the flipzero binary: each position is searched by `flipzero uai` (the `ab`
player, `uainewgame` before each, `go depth DEPTH`), and its score is the mean of the
last two iterations' scores (depth DEPTH-1 and DEPTH), which cancels most of Ataxx's
odd/even swing. A position is kept when |score| <= MAX_CP, from the side to move. The
kept positions are written in a seeded shuffle, so that the first N of the file are a
spread of the whole set (cuteataxx and `flipzero match` both take openings in file
order). The same binary's search is deterministic at a fixed depth: the same command
writes the same file.

Standard library only. The move generator is checked against flipzero's own perft
(`flipzero perft PLIES` from the start counts the leaves this script enumerates).
"""
import argparse
import math
import random
import subprocess
import sys

N = 7
START = "x5o/7/7/7/7/7/o5x x 0 1"
MATE = 1e6


def parse_fen(fen):
    """(board dict {(file, rank): 'x'|'o'|'-'}, side, halfmoves, fullmoves)."""
    rows, side, half, full = fen.split()
    board = {}
    for i, row in enumerate(rows.split("/")):
        rank = N - 1 - i
        f = 0
        for c in row:
            if c.isdigit():
                f += int(c)
            else:
                board[(f, rank)] = c
                f += 1
    return board, side, int(half), int(full)


def to_fen(board, side, half, full):
    rows = []
    for rank in range(N - 1, -1, -1):
        row, empty = "", 0
        for f in range(N):
            c = board.get((f, rank))
            if c is None:
                empty += 1
            else:
                if empty:
                    row += str(empty)
                    empty = 0
                row += c
        if empty:
            row += str(empty)
        rows.append(row)
    return f"{'/'.join(rows)} {side} {half} {full}"


def sq(f, r):
    return "abcdefg"[f] + str(r + 1)


def moves(board, side):
    """Legal moves as (from or None, to) pairs; singles once per target square."""
    out = []
    singles = set()
    for (f, r), c in board.items():
        if c != side:
            continue
        for df in range(-2, 3):
            for dr in range(-2, 3):
                t = (f + df, r + dr)
                if (df, dr) == (0, 0) or not (0 <= t[0] < N and 0 <= t[1] < N) or t in board:
                    continue
                if max(abs(df), abs(dr)) == 1:
                    singles.add(t)
                else:
                    out.append(((f, r), t))
    return [(None, t) for t in sorted(singles)] + sorted(out)


def make(board, side, half, full, move):
    frm, to = move
    b = dict(board)
    if frm is not None:
        del b[frm]
    b[to] = side
    them = "o" if side == "x" else "x"
    for df in (-1, 0, 1):
        for dr in (-1, 0, 1):
            n = (to[0] + df, to[1] + dr)
            if b.get(n) == them:
                b[n] = side
    half = 0 if frm is None else half + 1
    full = full + (side == "o")
    return b, them, half, full


def perft(pos, depth):
    """Leaf count in the convention of flipzero and libataxx (a single counted once)."""
    if depth == 0:
        return 1
    b, s, h, f = pos
    return sum(perft(make(b, s, h, f, m), depth - 1) for m in moves(b, s))


def positions_after(plies):
    """Distinct FENs after exactly `plies` plies from the start (no passes arise so early)."""
    level = {START}
    for _ in range(plies):
        nxt = set()
        for fen in level:
            b, s, h, f = parse_fen(fen)
            for m in moves(b, s):
                nxt.add(to_fen(*make(b, s, h, f, m)))
        level = nxt
    return sorted(level)


def check_perft(flipzero, plies):
    want = perft(parse_fen(START), plies)
    out = subprocess.run([flipzero, "perft", "--depth", str(plies)], capture_output=True, text=True, check=True).stdout
    got = [int(t) for t in out.replace(",", " ").split() if t.isdigit()]
    if want not in got:
        sys.exit(f"move generator disagrees with flipzero perft {plies}: {want} vs {out.strip()!r}")
    return want


class Uai:
    def __init__(self, flipzero):
        self.p = subprocess.Popen([flipzero, "uai"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("uai")
        self.wait("uaiok")

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def wait(self, token):
        lines = []
        for line in self.p.stdout:
            line = line.strip()
            lines.append(line)
            if line.split()[:1] == [token]:
                return lines
            if line.startswith("info string error"):
                sys.exit(f"flipzero uai: {line}")
        sys.exit("flipzero uai ended")

    def score(self, fen, depth):
        self.send("uainewgame")
        self.send(f"position fen {fen}")
        self.send(f"go depth {depth}")
        by_depth = {}
        for line in self.wait("bestmove"):
            t = line.split()
            if t[:1] == ["info"] and "depth" in t and "score" in t:
                kind, value = t[t.index("score") + 1 : t.index("score") + 3]
                # A forced win or loss (`score mate N`) is as far from equal as it gets.
                v = int(value) if kind == "cp" else math.copysign(MATE, int(value))
                by_depth[int(t[t.index("depth") + 1])] = v
        if depth not in by_depth or depth - 1 not in by_depth:
            sys.exit(f"no score at depths {depth - 1} and {depth} for {fen}")
        return (by_depth[depth - 1] + by_depth[depth]) / 2

    def close(self):
        self.send("quit")
        self.p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("flipzero")
    ap.add_argument("--plies", type=int, default=3)
    ap.add_argument("--depth", type=int, default=7)
    ap.add_argument("--max-cp", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scores", help="also write every position with its score (TSV) here")
    ap.add_argument("--cached-scores", help="take the scores from a --scores file of an earlier run "
                    "(same binary, plies and depth) instead of searching: to try another --max-cp")
    a = ap.parse_args()
    leaves = check_perft(a.flipzero, a.plies)
    fens = positions_after(a.plies)
    scored = []
    if a.cached_scores:
        cached = {}
        with open(a.cached_scores) as f:
            for line in f:
                s, fen = line.rstrip("\n").split("\t")
                cached[fen] = float(s)
        if set(cached) != set(fens):
            sys.exit(f"{a.cached_scores} does not hold the {len(fens)} positions of {a.plies} plies")
        scored = [(fen, cached[fen]) for fen in fens]
    else:
        uai = Uai(a.flipzero)
        for i, fen in enumerate(fens):
            scored.append((fen, uai.score(fen, a.depth)))
            if (i + 1) % 200 == 0:
                print(f"{i + 1}/{len(fens)} scored", file=sys.stderr)
        uai.close()
    if a.scores:
        with open(a.scores, "w") as f:
            f.writelines(f"{s}\t{fen}\n" for fen, s in scored)
    kept = [fen for fen, s in scored if abs(s) <= a.max_cp]
    random.Random(a.seed).shuffle(kept)
    cmd = f"python3 bench/ataxx-openings.py FLIPZERO --plies {a.plies} --depth {a.depth} --max-cp {a.max_cp:g} --seed {a.seed}"
    print(f"# Balanced Ataxx openings: {len(kept)} of the {len(fens)} distinct positions {a.plies} plies from")
    print(f"# the start ({leaves} move sequences, = flipzero perft {a.plies}) whose flipzero alpha-beta score")
    print(f"# (mean of depths {a.depth - 1} and {a.depth}, side to move) is within +-{a.max_cp:g} cp; seeded order.")
    print(f"# Written by: {cmd}")
    print("# (FLIPZERO: a flipzero binary; see the script's docstring.) Both colours of each are played.")
    for fen in kept:
        print(fen)


if __name__ == "__main__":
    main()
