#!/usr/bin/env python3
"""The strength curve of a run as a Markdown table (docs/strength.md): for each new best
(its generation's row of metrics.csv), the wall-clock minutes since the run started, the
best, and its anchor scores against every ladder player, with the Elo each score means.

    python3 bench/strength-curve.py RUN_DIR [MINUTES]   (a row at most every MINUTES; 0 = all)

Standard library only.
"""
import csv
import math
import os
import sys


def elo(score: float) -> float:
    score = min(max(score, 1e-3), 1 - 1e-3)
    return -400 * math.log10(1 / score - 1)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    run = sys.argv[1]
    every = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    with open(os.path.join(run, "metrics.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    ladder = [c[len("score_vs_"):] for c in rows[0] if c.startswith("score_vs_")]
    print("| minutes | gen | best | " + " | ".join(f"vs {p}" for p in ladder) + " |")
    print("|---|---|---|" + "---|" * len(ladder))
    last_shown = None
    for i, r in enumerate(rows):
        if r["promoted"] != "true":
            continue
        minutes = float(r["elapsed_s"]) / 60
        final = i == max(j for j, x in enumerate(rows) if x["promoted"] == "true")
        if last_shown is not None and minutes - last_shown < every and not final:
            continue
        last_shown = minutes
        cells = []
        for p in ladder:
            s = r[f"score_vs_{p}"]
            cells.append(f"{float(s):.2f} ({elo(float(s)):+.0f})" if s else "-")
        print(f"| {minutes:.0f} | {r['generation']} | {r['best']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
