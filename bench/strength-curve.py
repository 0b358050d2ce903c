#!/usr/bin/env python3
"""The strength curve of a run as a Markdown table (docs/strength.md): for each new best
(its generation's row of metrics.csv), the wall-clock minutes since the run started, the
best, and its anchor scores against every ladder player, with the Elo each score means.

    python3 bench/strength-curve.py RUN_DIR [MINUTES] [RATINGS]

A row at most every MINUTES (0 = every new best). RATINGS is the output of
`flipzero ratings --run RUN_DIR` saved to a file: it adds each best's maximum-likelihood
Elo over all the run's games (anchored at the ladder's last player) and its interval.

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
    ml = {}
    if len(sys.argv) > 3:
        for line in open(sys.argv[3]):
            f = line.split()
            if len(f) >= 4 and f[0].isdigit() and f[2].lstrip("-").isdigit():
                ml[f[1]] = f"{int(f[2]):+d} ± {f[3]}"
    with open(os.path.join(run, "metrics.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    ladder = [c[len("score_vs_"):] for c in rows[0] if c.startswith("score_vs_")]
    extra = " ML Elo |" if ml else ""
    print("| minutes | gen | best |" + extra + " " + " | ".join(f"vs {p}" for p in ladder) + " |")
    print("|---|---|---|" + ("---|" if ml else "") + "---|" * len(ladder))
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
        rating = f" {ml.get(r['best'], '-')} |" if ml else ""
        print(
            f"| {minutes:.0f} | {r['generation']} | {r['best']} |{rating} "
            + " | ".join(cells)
            + " |"
        )


if __name__ == "__main__":
    main()
