#!/usr/bin/env python3
"""Scores one gauntlet match from its PGN, as written by cuteataxx or by `flipzero match`:
the player's W/D/L, score, Elo with its 95% interval from pentanomial pairs (the two
games of an opening, colours swapped), and the games lost on time, by an illegal move
or by a crash / forfeit, for each side.

    python3 bench/gauntlet-score.py PGN PLAYER ENGINE [--tsv]

PLAYER and ENGINE are the names in the PGN's Black/White tags; `@A @B` takes `flipzero
match`'s players A and B (A is Black in the first game of each pair, round k.1). Without --tsv it prints a
short text summary; with --tsv one tab-separated line of the fields in TSV_FIELDS.
The Elo and its interval are computed as `flipzero match` computes them
(`eval::MatchStats::elo`): the variance of the pair scores, a score of 0 or 1 pulled in
by half a game (its interval is then infinite). Standard library only.
"""
import math
import re
import sys
from collections import defaultdict

TSV_FIELDS = [
    "games", "wins", "draws", "losses", "score", "elo", "ci95", "pentanomial",
    "time_losses_player", "time_losses_engine", "illegal_player", "illegal_engine",
    "crashes_player", "crashes_engine", "adjudicated", "unfinished",
]


def games_of(path):
    """Each game's tags (a dict) in file order."""
    games, tags = [], {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r'^\[(\w+)\s+"(.*)"\]\s*$', line)
            if m:
                if "Result" in tags and m.group(1) == "Event":
                    games.append(tags)
                    tags = {}
                tags[m.group(1)] = m.group(2)
    if tags:
        games.append(tags)
    return [g for g in games if "Result" in g]


def elo_from_score(s):
    return -400.0 * math.log10(1.0 / s - 1.0) + 0.0


def elo(wdl, penta):
    w, d, l = wdl
    n = w + d + l
    pairs = sum(penta)
    raw = (w + 0.5 * d) / n if n else 0.5
    eps = 0.5 / n if n else 0.5
    score = min(max(raw, eps), 1 - eps)
    spread = lambda counts: sum(1 for c in counts if c > 0) >= 2
    varied = spread(penta) if pairs else spread(wdl)
    if pairs:
        vals = [0.0, 0.25, 0.5, 0.75, 1.0]
        mean = sum(v * c for v, c in zip(vals, penta)) / pairs
        var = sum(c * (v - mean) ** 2 for v, c in zip(vals, penta)) / pairs
        se = math.sqrt(var / pairs)
    elif n:
        var = sum(c * (v - raw) ** 2 for v, c in zip([1.0, 0.5, 0.0], wdl)) / n
        se = math.sqrt(var / n)
    else:
        se = 0.0
    lo = min(max(score - 1.959964 * se, eps), 1 - eps)
    hi = min(max(score + 1.959964 * se, eps), 1 - eps)
    ci = math.inf if raw <= 0 or raw >= 1 or not varied else (elo_from_score(hi) - elo_from_score(lo)) / 2
    return raw, elo_from_score(score), ci


def score(path, player, engine):
    games = games_of(path)
    if (player, engine) == ("@A", "@B"):
        # `flipzero match` names players by their specs; A is Black in round k.1.
        first = next((g for g in games if g.get("Round", "").endswith(".1")), None)
        if first is None and games:
            sys.exit(f"{path}: no game of round k.1 to tell player A by")
        if first is not None:
            player, engine = first["Black"], first["White"]
    wdl = [0, 0, 0]
    counts = defaultdict(int)
    # Pairs: per opening, the player's games as Black and as White, matched in file order.
    by_fen = defaultdict(lambda: ([], []))
    for g in games:
        black, white, result = g.get("Black"), g.get("White"), g.get("Result")
        if {black, white} != {player, engine}:
            sys.exit(f"{path}: a game of {black!r} vs {white!r}, not {player!r} vs {engine!r}")
        if result not in ("1-0", "0-1", "1/2-1/2"):
            counts["unfinished"] += 1
            continue
        if result == "1/2-1/2":
            p, loser = 0.5, None
        else:
            winner, loser = (black, white) if result == "1-0" else (white, black)
            p = 1.0 if winner == player else 0.0
        wdl[0 if p == 1 else 1 if p == 0.5 else 2] += 1
        by_fen[g.get("FEN", "")][0 if black == player else 1].append(p)
        side = "player" if loser == player else "engine"
        # cuteataxx: [Adjudicated "..."]; flipzero match: [Termination "..."].
        adj = g.get("Adjudicated", "")
        term = g.get("Termination", "")
        if adj == "Out of time" or term.startswith("time-loss"):
            counts[f"time_losses_{side}"] += 1
        elif adj == "Illegal move" or term.startswith("forfeit") and "illegal move" in term:
            counts[f"illegal_{side}"] += 1
        elif adj == "*" or term.startswith("forfeit"):
            counts[f"crashes_{side}"] += 1
        elif adj:
            counts["adjudicated"] += 1
    penta = [0] * 5
    for as_black, as_white in by_fen.values():
        for a, b in zip(as_black, as_white):
            penta[int(round((a + b) * 2))] += 1
    raw, e, ci = elo(wdl, penta)
    row = {
        "games": sum(wdl), "wins": wdl[0], "draws": wdl[1], "losses": wdl[2],
        "score": f"{raw:.3f}", "elo": f"{e:.1f}", "ci95": "inf" if math.isinf(ci) else f"{ci:.1f}",
        "pentanomial": ",".join(map(str, penta)),
    }
    for k in TSV_FIELDS[8:]:
        row[k] = counts[k]
    return row


def main():
    args = [a for a in sys.argv[1:] if a != "--tsv"]
    if len(args) != 3:
        sys.exit(__doc__)
    row = score(*args)
    if "--tsv" in sys.argv:
        print("\t".join(str(row[k]) for k in TSV_FIELDS))
        return
    print(f"{args[1]} vs {args[2]}: {row['games']} games, W/D/L {row['wins']}/{row['draws']}/{row['losses']}, "
          f"score {row['score']}, Elo {row['elo']} +- {row['ci95']} (95%), pentanomial [{row['pentanomial']}]")
    print(f"time losses {row['time_losses_player']}/{row['time_losses_engine']}, illegal moves "
          f"{row['illegal_player']}/{row['illegal_engine']}, crashes/forfeits {row['crashes_player']}/"
          f"{row['crashes_engine']} (player/engine); adjudicated {row['adjudicated']}, unfinished {row['unfinished']}")


if __name__ == "__main__":
    main()
